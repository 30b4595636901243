#!/usr/bin/env bash
# Prepared in session 58 for the next session's calls, whichever card comes (scripts/device_next_calls.sh). Carry .whl
# .carry7 .carry8 (and s58ab on an H100's first call).
# - H200: session 49's plan, unchanged (no committed H200 table changed since), TAG s59.
# - H100, call 1: the A/B of the 7 f16 col entries session 58's f16 col grid and its floor recheck changed
#   (shapes/changed_f16_col.txt; both roles). OLD: the tables of 538a2ca,
#     mkdir -p s58ab && git archive 538a2ca kernels/tables | tar x -C s58ab && mv s58ab/kernels/tables s58ab/old_tables
#   Calls 2 and 3 (CALL=call2, then RECHECK=1 CALL=call3): the f16 row grid against cuBLASLt autotuning (session 58
#   reached 612 of 1000 shapes in one call: 1.271x, 5 below 0.97x). Then the f32 col grid (H100_RUNS="col:fp32",
#   calls 4 and 5): it stamps the f32 cuBLASLt choices still without an identity.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=1] bash benchmarks/h100-2026-12-07-s58/first_call.sh
H200_TAG=${H200_TAG:-s59} OLD=${OLD:-s58ab/old_tables} SHAPES=benchmarks/h100-2026-12-07-s58/shapes/changed \
  LAYOUT=col H100_TAG=${H100_TAG:-s59h} H100_RUNS=${H100_RUNS:-"row:fp16"} exec bash scripts/device_next_calls.sh
