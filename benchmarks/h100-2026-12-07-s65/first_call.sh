#!/usr/bin/env bash
# Prepared in session 65 for the next calls, whichever card comes (scripts/device_next_calls.sh). Carry .whl .carry7
# .carry8; slim keeping only h100-2026-12-07-s65 (nothing resumes unless H100_RESUME_FROM names a committed grid).
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32 row
#   and f16 col grids, TAG from H200_TAG; later calls on the warm machine: CALL=call2 ..., RECHECK=1 on the one that
#   completes a grid.
# - H100: every grid against cuBLASLt autotuning is whole, rechecked and A/B'd (f16 row last, in session 65). The f16
#   col overlay's last grid is the oldest (session 58; its 7 entries A/B'd in session 59), so a fresh f16 col grid
#   against the autotuner measures its end state. A call that cannot finish it runs with RECHECK=; a later session
#   resumes the filed part with H100_RESUME_FROM=benchmarks/<session>/callN/grid_col.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=] [H100_RESUME_FROM=...] \
#     bash benchmarks/h100-2026-12-07-s65/first_call.sh
H200_TAG=${H200_TAG:-s66} H100_TAG=${H100_TAG:-s66h} H100_RUNS=${H100_RUNS:-"col:fp16"} \
  H100_RESUME_FROM=${H100_RESUME_FROM-} exec bash scripts/device_next_calls.sh
