#!/usr/bin/env bash
# Prepared in session 61 for the next session's calls, whichever card comes (scripts/device_next_calls.sh). Carry .whl
# .carry7 .carry8; slim keeping h100-2026-12-07-s60 (the resumed run) and this folder.
# - H200: session 49's plan, unchanged (no committed H200 table changed since), TAG s62.
# - H100: the rest of the f32 row grid against cuBLASLt autotuning, which stamps the 23 f32 row cuBLASLt choices
#   still without an identity (19 graph, 4 eager). Session 60's call 6 timed 435 of its 1000 shapes (call6/grid_row,
#   tables of 4a046f8); call 1 resumes that run (the same shuffled order) and times the other 565 (~320 s) and the
#   floor recheck: one call of END=570. Resume only while `git diff 4a046f8 -- kernels/tables` is empty (else pass
#   H100_RESUME_FROM= for a fresh grid, two calls: RECHECK= on the first). Session 61 got no machine for it.
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=] bash benchmarks/h100-2026-12-07-s61/first_call.sh
H200_TAG=${H200_TAG:-s62} H100_TAG=${H100_TAG:-s62h} H100_RUNS=${H100_RUNS:-"row:fp32"} \
  H100_RESUME_FROM=${H100_RESUME_FROM-benchmarks/h100-2026-12-07-s60/call6/grid_row} exec bash scripts/device_next_calls.sh
