#!/usr/bin/env bash
# Session 16, call 3 (nvidia-h200): the col grid of the tables as committed after call 2's A/B, shuffled (session 11's
# order), f32 then f16, against torch.matmul and cuBLAS TN: the per-call figures the eager changes should move
# (session 15's col grid is the comparison; tuner.grid_diff separates the changed entries from the rest).
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
DL=$(( (${END:-560} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=col DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-tn STATE=/tmp/s16c3 SKIP_ENV=1 bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid col (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_col/summary.txt | head -40
