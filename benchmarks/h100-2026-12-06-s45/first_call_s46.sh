#!/usr/bin/env bash
# Prepared in session 45: the next device session's first call, for whichever card comes. Carry .whl .carry7 .carry3
# .carry8; slim keeping the folders docs/notes.md names.
# - H200: session 45's first call there (late round 3's A/B, the suites, the f16 row grid until END, TAG=s45).
# - H100 (session 45 A/B'd both overlays there): the suites, then the f16 row grid until END, resumable by a later
#   call on the same warm machine with TAG=h100s46 (sessions 43 and 45 each ran ~605 of its shapes before a deadline).
#   HGEMM_COMMIT=<sha> [END=570] bash benchmarks/h100-2026-12-06-s45/first_call_s46.sh     # ~END s
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash benchmarks/h100-2026-12-06-s45/first_call.sh
fi
SUITES=1 TAG=h100s46 END=${END:-570} RUNS="row:fp16" CALL=${CALL:-call1} bash benchmarks/h200-2026-12-03-s24/s24grid.sh
