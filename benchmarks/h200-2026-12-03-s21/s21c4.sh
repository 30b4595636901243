#!/usr/bin/env bash
# Session 21, call 4 (nvidia-h200, carry .whl + .carry1 + .carry2, right after call 3 on the same warm machine): call 2's
# col grid continued (--resume from its state in /tmp/s21c2_col, kept on the machine between calls), same shuffled order
# and competitors, deadlines from the time left (END); returns the whole run (call 2's shapes and these).
set -u
source scripts/device_prologue.sh
ls /tmp/s21c2_col/eval_fp32/results.json /tmp/s21c2_col/eval_fp16/results.json >> $OUT/rc.txt 2>&1
DL=$(( (${END:-330} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-tn ALSO_DISPATCHERS=attrs=fastpath:attributes STATE=/tmp/s21c2_col SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid col continued (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing|shapes" $OUT/grid_col/summary.txt | head -40
pack_out call4
