#!/usr/bin/env bash
# Prepared in session 49 for the next session's first call, whichever card comes (a call naming nvidia-h200 gets an
# H100 or an H200). Carry .whl .carry7 .carry8 s49ab.
# - H200: the GPU suites at this commit (late round 3 and its two reverts in the tables), then the f32 row grid of
#   these tables (last whole in session 39) and the f16 col grid (last in session 44, before the late rounds), the time
#   left split over them, resumable by a later call on the same machine with the same TAG (s24grid.sh).
# - H100: the A/B of the 11 col entries whose H100 dispatch changed in session 49 (benchmarks/h100-2026-12-06-s49/
#   shapes/: 6 f32, 5 f16), both roles: late round 3's H200 picks that the H100 overlay does not correct (6 f32, 1 f16)
#   and 4 graph changes of that session's f16 col grid (its fifth, 512x128x12288, puts back the choice of 338b560);
#   session 48's ab_changed.sh, OLD = kernels/tables as of 338b560, made here with
#   mkdir -p s49ab && git archive 338b560 kernels/tables | tar x -C s49ab && mv s49ab/kernels/tables s49ab/old_tables
#   END=570 HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-06-s49/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  SUITES=1 TAG=${TAG:-s50} END=${END:-570} RUNS=${RUNS:-"row:fp32 col:fp16"} CALL=${CALL:-call1} \
    exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
fi
OLD=${OLD:-s49ab/old_tables} SHAPES=benchmarks/h100-2026-12-06-s49/shapes/changed AB_DL=${AB_DL:-60} \
  CALL=${CALL:-call1} exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
