#!/usr/bin/env bash
# Prepared in session 51 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8 s51ab.
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32
#   row and f16 col grids of the tables, the time left split over them, resumed by later calls on the same machine
#   with the same TAG (s24grid.sh).
# - H100, call 1: the A/B of the 8 entries whose H100 dispatch session 51 changed (shapes/: 1 f32 row, 7 f16 col),
#   both roles (~2 min). Session 48's ab_changed.sh; OLD = kernels/tables as of 244b293, made here with
#   mkdir -p s51ab && git archive 244b293 kernels/tables | tar x -C s51ab && mv s51ab/kernels/tables s51ab/old_tables
# - H100, a later call (CALL=call2 ...): the f32 col grid of the tables with the card's overlays on (last whole on
#   this card in session 50), resumable with the same TAG, and its floor recheck once it has every shape (RECHECK=1,
#   60 s kept for it; tuner.file_grid files it, gpu_overlays.Rechecked.filed reads it).
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-06-s51/first_call.sh
set -u
CALL=${CALL:-call1}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  [ "$CALL" = call1 ] && export SUITES=1   # a later call resumes the grids only
  TAG=${TAG:-s52} END=${END:-570} RUNS=${RUNS:-"row:fp32 col:fp16"} CALL=$CALL \
    exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
fi
if [ "$CALL" = call1 ]; then
  OLD=${OLD:-s51ab/old_tables} SHAPES=benchmarks/h100-2026-12-06-s51/shapes/changed LAYOUT="col row" \
    AB_DL=${AB_DL:-60} CALL=call1 exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
fi
TAG=${TAG:-s52h} END=${END:-570} RUNS=${RUNS:-"col:fp32"} RECHECK=${RECHECK-1} CALL=$CALL \
  exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
