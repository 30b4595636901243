#!/usr/bin/env bash
# Prepared in session 62 for the next session's calls, whichever card comes (scripts/device_next_calls.sh); session
# 63 got no machine, so its tags are session 64's. Carry .whl .carry7 .carry8; slim keeping only h100-2026-12-07-s62
# (nothing resumes or waits for an A/B).
# - H200: session 49's plan, unchanged (no committed H200 table changed since): call 1 the GPU suites, then the f32 row
#   and f16 col grids, TAG s64; later calls on the warm machine: CALL=call2 ..., RECHECK=1 on the one that completes
#   a grid.
# - H100: every grid against cuBLASLt autotuning is whole and A/B'd; the f16 row overlay moved most since its grid
#   (session 59's 10 entries, +4.7% / +4.5% in session 60's A/B), so a fresh f16 row grid against the autotuner
#   measures the end state: two calls on the warm machine, RECHECK= on the first, RECHECK=1 on the second.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=] bash benchmarks/h100-2026-12-07-s62/first_call.sh
H200_TAG=${H200_TAG:-s64} H100_TAG=${H100_TAG:-s64h} H100_RUNS=${H100_RUNS:-"row:fp16"} H100_RESUME_FROM= \
  exec bash scripts/device_next_calls.sh
