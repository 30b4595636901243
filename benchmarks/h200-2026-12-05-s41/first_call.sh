#!/usr/bin/env bash
# Session 41: the next device session's first call, for whichever card comes (a call naming nvidia-h200 got an H100
# in sessions 38 and 40): on the H200 the GPU suites (SUITES=1, the `tuned_elsewhere` asserts among them) and the
# f16 col grid of the tables, resumable by a later call with the same TAG; on an H100 both H100 overlays A/B'd
# against the tables without them. Carry .whl .carry7 .carry3 .carry8; slim keeping the folders docs/notes.md names.
#   HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-05-s41/first_call.sh     # ~560 s
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  SUITES=1 TAG=s41 END=${END:-560} RUNS="col:fp16" CALL=call1 bash benchmarks/h200-2026-12-03-s24/s24grid.sh
else
  AB_DL=${AB_DL:-55} ACCS="fp32 fp16" CALL=call1 bash benchmarks/h100-2026-12-05-s38/overlay_ab.sh
fi
