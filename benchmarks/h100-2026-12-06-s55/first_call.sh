#!/usr/bin/env bash
# Prepared in session 55 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8 (and s55ab on an H100's first call).
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32
#   row and f16 col grids, resumed by later calls with the same TAG (s56); RECHECK=1 on the call that completes a grid.
# - H100, call 1: the A/B of the 17 f32 entries session 55 changed (shapes/changed_f32_{col,row}.txt; both roles):
#   its grid's 5 picks of the autotuner's cuBLASLt algorithm, 10 entries whose cuBLASLt choices were stamped with
#   their identity (the same algorithm: expect ~1.00x there, which also checks the dispatcher's identity lookup on a
#   GPU), and 2 entries session 54's grids move under the floor recheck's fix (tuner.floor_recheck._merged:
#   2048x128x8192 col, 512x2048x8192 row). OLD: the tables of e99b27d,
#     mkdir -p s55ab && git archive e99b27d kernels/tables | tar x -C s55ab && mv s55ab/kernels/tables s55ab/old_tables
#   (~1 min). Calls 2 and 3 (CALL=call2 / call3): the f32 row grid against cuBLASLt autotuning with those overlays
#   (session 54: 1.122x, 30 below 0.97x of it), resumed by the second; RECHECK=1 keeps 150 s for the floor recheck.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-06-s55/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${TAG:-s56} exec bash benchmarks/h100-2026-12-06-s51/first_call.sh
fi
if [ "${CALL:-call1}" = call1 ]; then
  OLD=${OLD:-s55ab/old_tables} SHAPES=benchmarks/h100-2026-12-06-s55/shapes/changed LAYOUT="col row" AB_DL=${AB_DL:-75} \
    CALL=call1 exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
fi
TAG=${TAG:-s56h} RUNS=${RUNS:-"row:fp32"} RECHECK_S=${RECHECK_S:-150} \
  exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
