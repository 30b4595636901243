#!/usr/bin/env bash
# Session 41: the next device session's first call, for whichever card comes (a call naming nvidia-h200 got an H100
# in sessions 38 and 40): on the H200 the GPU suites (SUITES=1, the `tuned_elsewhere` asserts among them) and the
# f16 col grid of the tables, resumable by a later call with the same TAG; on an H100 (since session 42) the GPU
# suites and the f32 row grid with the H100 overlays on. Carry .whl .carry7 .carry3 .carry8; slim keeping the
# folders docs/notes.md names.
#   HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-05-s41/first_call.sh     # ~560 s
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  SUITES=1 TAG=s41 END=${END:-560} RUNS="col:fp16" CALL=call1 bash benchmarks/h200-2026-12-03-s24/s24grid.sh
else
  # session 42 A/B'd both overlays on an H100 (benchmarks/h100-2026-12-05-s42): now the f32 row grid with them on
  SUITES=1 TAG=h100 END=${END:-560} RUNS="row:fp32" CALL=call1 bash benchmarks/h200-2026-12-03-s24/s24grid.sh
fi
