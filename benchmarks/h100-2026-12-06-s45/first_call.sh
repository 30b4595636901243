#!/usr/bin/env bash
# Session 45's first call, for whichever card comes (devices were scarce at the session's start: one call may be all
# it gets, so the H200 branch folds session 44's calls 1 and 2 into one). Carry .whl .carry7 .carry3 .carry8.
# - H200: late round 3 (session 44's split-K corrections, a candidate in .carry3/cand_splitk) A/B'd on the 13 f32 /
#   4 f16 col entries it changes, both roles (into $OUT/ab/, packed there); then the GPU suites at this commit and,
#   if at least 250 s of END are left, the f16 row grid of the tables until END, resumable by a later call on the
#   same warm machine with TAG=s45.
# - H100: session 44's first call there (the suites, then both H100 overlays A/B'd whole; AB_DL per role and acc).
#   HGEMM_COMMIT=<sha> [END=570] bash benchmarks/h100-2026-12-06-s45/first_call.sh     # ~END s
set -u
END=${END:-570}
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  AB_DL=${AB_DL:-$(( (END - 200) / 8 ))} exec bash benchmarks/h200-2026-12-06-s44/first_call.sh
fi
t0=$(date +%s); mkdir -p $OUT/ab
OUT=$OUT/ab AB_DL=${AB_DL:-40} CALL=ab bash benchmarks/h200-2026-12-06-s44/ab_splitk_round.sh
left=$(( END - $(date +%s) + t0 ))
if [ $left -ge 250 ]; then
  SUITES=1 TAG=s45 END=$left RUNS="row:fp16" CALL=${CALL:-call1} bash benchmarks/h200-2026-12-03-s24/s24grid.sh
else
  source scripts/device_prologue.sh
  OUT=$OUT SET=tables KERNEL_S=70 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
  cat $OUT/env.txt $OUT/rc.txt $OUT/ab/rc.txt
  pack_out ${CALL:-call1}
fi
