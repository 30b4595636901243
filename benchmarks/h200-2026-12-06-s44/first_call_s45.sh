#!/usr/bin/env bash
# Prepared in session 44: the next device session's first call, for whichever card comes. Carry .whl .carry7 .carry3
# .carry8; slim keeping the folders docs/notes.md names.
# - H200: the GPU suites at this commit (the late rounds on since 0c08b8e: 224 variants), then the f16 row grid of the
#   tables, resumable by a later call on the same warm machine with TAG=s45 (session 39 ran 618 of its shapes; it is
#   the one grid of the four that has never run whole on the H200).
# - H100: session 44's first call there (the suites, then both H100 overlays A/B'd whole: f32 106 / f16 173 entries,
#   rebuilt over the late rounds' tables and not yet measured).
#   HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-06-s44/first_call_s45.sh     # ~560 s
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  SUITES=1 TAG=s45 END=${END:-560} RUNS="row:fp16" CALL=${CALL:-call1} bash benchmarks/h200-2026-12-03-s24/s24grid.sh
else
  bash benchmarks/h200-2026-12-06-s44/first_call.sh
fi
