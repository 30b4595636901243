#!/usr/bin/env bash
# Prepared in session 60 for the next session's calls, whichever card comes. Carry .whl .carry7 .carry8.
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32
#   row and f16 col grids, resumed by later calls on the same warm machine with the same TAG (s61); RECHECK=1 on the
#   call that completes a grid.
# - H100: nothing is waiting for an A/B (session 60 A/B'd every entry its own and session 59's grids moved). The f32
#   row grid against cuBLASLt autotuning (last whole in session 57) stamps the 23 f32 row cuBLASLt choices still
#   without an identity (19 graph, 4 eager). Session 60's call 6 timed 435 of its 1000 shapes (call6/grid_row, tables
#   of 4a046f8); call 1 resumes that run (RESUME_FROM, the same shuffled order) and times the other 565 (~320 s) and
#   the floor recheck: one call of END=570. Resume only while `git diff 4a046f8 -- kernels/tables` is empty (else
#   pass RESUME_FROM= for a fresh grid). Later calls on the same warm machine continue with the same H100_TAG.
#   Session 53's script keeps 150 s of END for the recheck unless RECHECK is set empty (`RECHECK=` for a call that
#   cannot finish a grid).
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=] bash benchmarks/h100-2026-12-07-s60/first_call.sh
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${H200_TAG:-s61} exec bash benchmarks/h100-2026-12-06-s51/first_call.sh
fi
TAG=${H100_TAG:-s61h} RUNS=${H100_RUNS:-"row:fp32"} RECHECK_S=${RECHECK_S:-150} \
  RESUME_FROM=${RESUME_FROM-benchmarks/h100-2026-12-07-s60/call6/grid_row} \
  exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
