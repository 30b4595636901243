#!/usr/bin/env bash
# Session 17, call 3 (nvidia-h200): the grid of the tables as committed after calls 1-2's A/Bs, shuffled (session 11's
# order), f32 then f16, B in LAYOUT (col: against torch.matmul and cuBLAS TN; row: torch.matmul and cuBLAS NN); END
# (s) sizes the deadlines. The per-call figures the mid-floor moves; tuner.grid_diff against session 16's col grid
# (col) or session 15's row grid (row) separates the changed entries from the rest.
set -u
source scripts/device_prologue.sh
LAYOUT=${LAYOUT:-col}
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
DL=$(( (${END:-560} - $(el)) / 2 - 12 ))
[ $LAYOUT = col ] && NB=cuBLAS-tn || NB=cuBLAS-nn
OUT=$OUT/grid_$LAYOUT GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=$LAYOUT DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,$NB STATE=/tmp/s17c3 SKIP_ENV=1 bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid $LAYOUT (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_$LAYOUT/summary.txt | head -40
