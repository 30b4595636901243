#!/usr/bin/env bash
# Session 62's pending device call, whichever card comes (scripts/device_next_calls.sh). Carry .whl .carry7 .carry8
# s62ab (the tables of 7a0acd6: `mkdir -p s62ab && git archive 7a0acd6 kernels/tables | tar x -C s62ab &&
# mv s62ab/kernels/tables s62ab/old_tables && rmdir s62ab/kernels`); slim keeping h100-2026-12-07-s62.
# - H100: the A/B of the 27 f32 row entries that call 2's recheck stamped into the H100 overlay (both roles).
# - H200: session 49's plan, unchanged (no committed H200 table changed since), the GPU suites then the f32 row and
#   f16 col grids, TAG s62; later calls: CALL=call2 ... with RECHECK=1 on the one that completes a grid.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-07-s62/first_call.sh
H200_TAG=${H200_TAG:-s62} OLD=${OLD:-s62ab/old_tables} SHAPES=${SHAPES-benchmarks/h100-2026-12-07-s62/shapes/changed} \
  LAYOUT=${LAYOUT:-row} AB_DL=${AB_DL:-150} exec bash scripts/device_next_calls.sh
