#!/usr/bin/env bash
# Session 41, for a call on the H200 (nvidia-h200; carry .whl .carry7; keep h200-2026-12-05-s39 and this folder):
# the 23 shapes session 39's four grids put below 0.97x of torch.matmul or of cuBLAS in B's form, timed again in
# ROUNDS (default 3) fresh eval runs each (scripts/floor_recheck.sh, tuner/floor_recheck.py): below in every run, or
# within run-to-run spread? ~12 eval runs of ~25 s each; no set starts after END (default 420 s from the start).
#   HGEMM_COMMIT=<sha> CALL=call1 bash benchmarks/h200-2026-12-05-s41/floor_recheck.sh
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
S=benchmarks/h200-2026-12-05-s39
for spec in "col fp32 call2 cuBLAS-tn" "col fp16 call3 cuBLAS-tn" "row fp32 call1 cuBLAS-nn" "row fp16 call3 cuBLAS-nn"; do
  set -- $spec
  [ $(el) -lt ${END:-420} ] || { echo "recheck $1 $2 skipped: past END at $(el)s" >> $OUT/rc.txt; continue; }
  OUT=$OUT/$1_$2 FIRST=$S/$3/grid_$1/$2/results.json.gz B_LAYOUT=$1 ACC=$2 BASELINES=torch.matmul,$4 \
    ROUNDS=${ROUNDS:-3} DEADLINE=$(( ${ROUNDS:-3} * 60 )) bash scripts/floor_recheck.sh
  echo "recheck $1 $2 rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; for f in $OUT/*/summary.txt; do echo "== $f"; grep -v "^|.*| *$" $f | head -3; sed -n '/^| baseline | below/,/^$/p' $f; done
pack_out ${CALL:-call1}
