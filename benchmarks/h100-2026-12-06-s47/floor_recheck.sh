#!/usr/bin/env bash
# Session 47's call 4 (an H100; carry .whl .carry7): the shapes this session's f16 col grid (call 3) and f32 row grid
# (call 2) put below 0.97x of torch.matmul or of cuBLAS in B's form, timed again in two fresh eval runs each
# (scripts/floor_recheck.sh, tuner/floor_recheck.py). Ran as s47recheck/run.sh with the grids' results.json there;
# the same, reading the filed grids:
#   HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s47/floor_recheck.sh      # ~70 s on the H100
set -u
source scripts/device_prologue.sh
S=benchmarks/h100-2026-12-06-s47
for spec in "col fp16 cuBLAS-tn 120 call3" "row fp32 cuBLAS-nn 60 call2"; do
  set -- $spec
  OUT=$OUT/$1_$2 FIRST=$S/$5/grid_$1/$2/results.json.gz B_LAYOUT=$1 ACC=$2 BASELINES=torch.matmul,$3 \
    ROUNDS=2 DEADLINE=$4 bash scripts/floor_recheck.sh
  echo "recheck $1 $2 rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; for f in $OUT/*/summary.txt; do echo "== $f"; sed -n '/^| baseline | below/,/^$/p' $f; done
pack_out ${CALL:-call4}
