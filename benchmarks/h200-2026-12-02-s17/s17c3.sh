#!/usr/bin/env bash
# Session 17, call 3 (nvidia-h200): the grids of the tables as committed after calls 1-2's A/Bs, shuffled (session 11's
# order), f32 then f16, B in each of LAYOUTS (col: against torch.matmul and cuBLAS TN; row: torch.matmul and cuBLAS
# NN); END (s) sizes the deadlines. Everything returns as one tarball (the device returns at most 8 files). The per-call figures the mid-floor moves; tuner.grid_diff against session 16's col grid
# (col) or session 15's row grid (row) separates the changed entries from the rest.
set -u
source scripts/device_prologue.sh
LAYOUTS=${LAYOUTS:-"col row"}; set -- $LAYOUTS; RUNS=$(( $# * 2 ))
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
DL=$(( (${END:-560} - $(el)) / RUNS - 12 ))
for LAYOUT in $LAYOUTS; do
  [ $LAYOUT = col ] && NB=cuBLAS-tn || NB=cuBLAS-nn
  OUT=$OUT/grid_$LAYOUT GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=$LAYOUT DEADLINE=$DL WARMUP_S=0.05 \
    BENCH_S=0.2 BASELINES=torch.matmul,$NB STATE=/tmp/s17c3_$LAYOUT SKIP_ENV=1 bash scripts/h200_eval.sh \
    > /tmp/eval_console_$LAYOUT.txt 2>&1
  echo "grid $LAYOUT (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt
for LAYOUT in $LAYOUTS; do grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_$LAYOUT/summary.txt | head -40; done
tar czf /tmp/call3.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/call3.tgz $OUT/
