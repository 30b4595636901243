#!/usr/bin/env bash
# Prepared in session 59 for the next session's calls, whichever card comes (scripts/device_next_calls.sh). Carry .whl
# .carry7 .carry8 (and s59ab on an H100's first call).
# - H200: session 49's plan, unchanged (no committed H200 table changed since), TAG s60.
# - H100, call 1: the A/B of the 10 f16 row entries session 59's f16 row grid and its floor recheck changed
#   (shapes/changed_f16_row.txt; both roles). OLD: the tables of ee99f61,
#     mkdir -p s59ab && git archive ee99f61 kernels/tables | tar x -C s59ab && mv s59ab/kernels/tables s59ab/old_tables
#   Later calls (CALL=call2, call3 ...; RECHECK=1 on the one that completes it): the f32 col grid against cuBLASLt
#   autotuning, which stamps the f32 cuBLASLt choices still without an identity (7 eager, 47 graph). One H100 call
#   of END=540 timed ~617 shapes: the grid takes two calls, the second with RECHECK=1.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=1] bash benchmarks/h100-2026-12-07-s59/first_call.sh
H200_TAG=${H200_TAG:-s60} OLD=${OLD:-s59ab/old_tables} SHAPES=benchmarks/h100-2026-12-07-s59/shapes/changed \
  LAYOUT=row H100_TAG=${H100_TAG:-s60h} H100_RUNS=${H100_RUNS:-"col:fp32"} exec bash scripts/device_next_calls.sh
