#!/usr/bin/env bash
# Prepared in session 53 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8.
# - H200: session 49's plan, unchanged (no committed H200 table changed since), as session 51's script runs it:
#   call 1 the GPU suites, then the f32 row and f16 col grids, resumed by later calls with the same TAG (s54);
#   RECHECK=1 on the call that completes a grid.
# - H100: the f32 grids against cuBLASLt autotuning (the best of its top-32 heuristic algorithms, timed per shape),
#   never measured on this card: the goal >= 1.08x (H200, session 25: 1.110x col / 1.106x row). Autotuning makes a
#   grid ~2 calls: col first, resumed by the next call with the same TAG (CALL=call2), then RUNS="row:fp32" (calls 3
#   and 4). RECHECK=1: the call that completes a grid times its shapes below 0.97x again (60 s kept for it).
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RUNS=...] bash benchmarks/h100-2026-12-06-s53/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${TAG:-s54} exec bash benchmarks/h100-2026-12-06-s51/first_call.sh
fi
TAG=${TAG:-s54h} END=${END:-570} RUNS=${RUNS:-"col:fp32"} RECHECK=${RECHECK-1} CALL=${CALL:-call1} \
  BASE_COL=cuBLASLt-auto-tuning-tn BASE_ROW=cuBLASLt-auto-tuning-nn exec bash benchmarks/h200-2026-12-03-s24/s24grid.sh
