#!/usr/bin/env bash
# Session 21, call 3 (nvidia-h200, carry .whl + .carry1 + .carry2, right after call 2): the row grid of the committed
# tables, shuffled (session 11's order), f32 then f16, against torch.matmul and cuBLAS NN, with ours[attrs] beside
# ours: the same tables through a C fast path that reads the operands through Python attributes (the host path before
# the tensor reader), interleaved in the same run; deadlines from the time left (END).
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
DL=$(( (${END:-560} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  B_LAYOUT=row BASELINES=torch.matmul,cuBLAS-nn ALSO_DISPATCHERS=attrs=fastpath:attributes STATE=/tmp/s21c3_row SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid row (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing|shapes" $OUT/grid_row/summary.txt | head -40
pack_out call3
