#!/usr/bin/env bash
# Prepared in session 57 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8 (and s57ab on an H100's first call).
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32
#   row and f16 col grids, resumed by later calls with the same TAG (s58); RECHECK=1 on the call that completes a grid.
# - H100, call 1: the A/B of the 9 f32 row entries session 57's row grid and floor recheck changed
#   (shapes/changed_f32_row.txt; both roles): 4 moves to the autotuner's cuBLASLt algorithm, 5 cuBLASLt choices
#   stamped with their identity (the same algorithm: expect ~1.00x). OLD: the tables of 6f2fce0,
#     mkdir -p s57ab && git archive 6f2fce0 kernels/tables | tar x -C s57ab && mv s57ab/kernels/tables s57ab/old_tables
#   (~30 s). Calls 2 and 3 (CALL=call2 / call3): the f16 col grid against cuBLASLt autotuning (session 57 reached 777
#   of 1000 shapes in one call: 1.277x, 3 below 0.97x), resumed by the second; RECHECK=1 keeps 150 s for the floor
#   recheck. Then the f16 row grid (RUNS="row:fp16", calls 4 and 5).
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-07-s57/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${TAG:-s58} exec bash benchmarks/h100-2026-12-06-s51/first_call.sh
fi
if [ "${CALL:-call1}" = call1 ]; then
  OLD=${OLD:-s57ab/old_tables} SHAPES=benchmarks/h100-2026-12-07-s57/shapes/changed LAYOUT=row AB_DL=${AB_DL:-75} \
    CALL=call1 exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
fi
TAG=${TAG:-s58h} RUNS=${RUNS:-"col:fp16"} RECHECK_S=${RECHECK_S:-150} \
  exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
