#!/usr/bin/env bash
# Prepared in session 54 for the next session's calls, whichever card comes (a call naming nvidia-h200 gets an H100
# or an H200). Carry .whl .carry7 .carry8. Session 53's script with this session's TAGs and a longer recheck:
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32
#   row and f16 col grids, resumed by later calls with the same TAG (s55); RECHECK=1 on the call that completes a grid.
# - H100: the f32 grids against cuBLASLt autotuning again, now with session 54's overlays on (61 entries moved to the
#   autotuner's cuBLASLt algorithms, A/B'd +7.1% col / +9.3% row on those entries): do the shapes below 0.97x of it
#   fall as the A/B predicts (39 -> ~10 col, 30 -> ~6 row)? Two calls per grid: col (CALL=call2 resumes), then
#   RUNS="row:fp32" (calls 3 and 4). RECHECK=1: the call that completes a grid times its shapes below 0.97x again,
#   with 150 s of END kept for it (RECHECK_S): session 54's 60 s reached 23 of 55 col and 22 of 30 row shapes, since
#   autotuning times 32 algorithms per shape and round.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RUNS=...] bash benchmarks/h100-2026-12-06-s54/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${TAG:-s55} exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
fi
TAG=${TAG:-s55h} RECHECK_S=${RECHECK_S:-150} exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
