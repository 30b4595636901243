#!/usr/bin/env bash
# Prepared in session 50 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8 s50ab.
# - H200: session 49's plan, unchanged (session 50 changed no committed H200 table): call 1 the GPU suites, then the
#   f32 row and f16 col grids of the tables, the time left split over them, resumed by later calls on the same
#   machine with the same TAG (s24grid.sh).
# - H100, call 1: the A/B of the 5 entries whose H100 dispatch session 50 changed (shapes/: 3 f32 col, 1 f16 col,
#   1 f16 row), both roles, both layouts (~2 min): 2 reverted by session 50's own A/B, 2 split-K picks of its sweep,
#   1 f32-accumulating cuBLAS NN pick of its f16 row grid. Session 48's ab_changed.sh; OLD = kernels/tables as of
#   6a5e407, made here with
#   mkdir -p s50ab && git archive 6a5e407 kernels/tables | tar x -C s50ab && mv s50ab/kernels/tables s50ab/old_tables
# - H100, a later call (CALL=call2 ...): the f32 row grid of the tables with the card's overlays on (last whole on
#   this card in session 47, before session 48's row sweep), resumable with the same TAG.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-06-s50/first_call.sh
set -u
CALL=${CALL:-call1}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  [ "$CALL" = call1 ] && export SUITES=1   # a later call resumes the grids only
  TAG=${TAG:-s51} END=${END:-570} RUNS=${RUNS:-"row:fp32 col:fp16"} CALL=$CALL \
    exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
fi
if [ "$CALL" = call1 ]; then
  OLD=${OLD:-s50ab/old_tables} SHAPES=benchmarks/h100-2026-12-06-s50/shapes/changed LAYOUT="col row" \
    AB_DL=${AB_DL:-60} CALL=call1 exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
fi
TAG=${TAG:-s51h} END=${END:-570} RUNS=${RUNS:-"row:fp32"} CALL=$CALL exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
