#!/usr/bin/env bash
# One session's device calls on whichever card comes (a call naming nvidia-h200 gets an H100 or an H200); a session's
# first_call.sh sets what changed and sources nothing else:
# - H200: session 49's plan (benchmarks/h100-2026-12-06-s51/first_call.sh: the GPU suites, then the f32 row and f16
#   col grids, resumed by later calls with the same H200_TAG; RECHECK=1 on the call that completes a grid).
# - H100, call 1: the A/B of the entries the last session's grids changed, both roles: OLD (the tables before, a
#   folder carried with the tree), SHAPES (prefix of <prefix>_<acc>_<layout>.txt), LAYOUT.
# - H100, later calls (CALL=call2 ...): H100_RUNS ("row:fp16", "col:fp32", ...) against cuBLASLt autotuning with the
#   card's overlays on, resumed with the same H100_TAG; RECHECK=1 keeps RECHECK_S for the floor recheck.
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  TAG=${H200_TAG:?} exec bash benchmarks/h100-2026-12-06-s51/first_call.sh
fi
if [ "${CALL:-call1}" = call1 ]; then
  OLD=${OLD:?} SHAPES=${SHAPES:?} LAYOUT=${LAYOUT:?} AB_DL=${AB_DL:-75} CALL=call1 \
    exec bash benchmarks/h100-2026-12-06-s48/ab_changed.sh
fi
TAG=${H100_TAG:?} RUNS=${H100_RUNS:?} RECHECK_S=${RECHECK_S:-150} exec bash benchmarks/h100-2026-12-06-s53/first_call.sh
