#!/usr/bin/env bash
# Prepared in session 64 for the next session's calls, whichever card comes (scripts/device_next_calls.sh). Carry
# .whl .carry7 .carry8; slim keeping only h100-2026-12-07-s64 (call1/grid_row is what the H100 resumes).
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32 row
#   and f16 col grids, TAG s65; later calls on the warm machine: CALL=call2 ..., RECHECK=1 on the one that completes
#   a grid.
# - H100: session 64's f16 row grid against cuBLASLt autotuning stopped at 837 of 1000 shapes (call 1; the machine
#   was taken back during call 2 and lending then paused). Its 163 shapes left (~100 s) and the floor recheck (150 s)
#   fit one call: it resumes from the committed call 1 with RECHECK on. No table may change before it runs, so that
#   the resumed shapes and the new ones measure the same tables.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] bash benchmarks/h100-2026-12-07-s64/first_call.sh
H200_TAG=${H200_TAG:-s65} H100_TAG=${H100_TAG:-s65h} H100_RUNS=${H100_RUNS:-"row:fp16"} \
  H100_RESUME_FROM=${H100_RESUME_FROM-benchmarks/h100-2026-12-07-s64/call1/grid_row} \
  exec bash scripts/device_next_calls.sh
