#!/usr/bin/env bash
# One session's device calls on whichever card comes (a call naming nvidia-h200 gets an H100 or an H200); a session's
# first_call.sh sets what is waiting and calls this:
# - H200: session 49's plan: call 1 the GPU suites, then the f32 row and f16 col grids of the tables (H200_RUNS),
#   the time left split over them, resumed by later calls on the same warm machine with the same H200_TAG; RECHECK=1
#   on the call that completes a grid.
# - H100, call 1 with an A/B waiting (SHAPES set): the entries the last session's grids changed, both roles: OLD (the
#   tables before, a folder carried with the tree), SHAPES (prefix of <prefix>_<acc>_<layout>.txt), LAYOUT; FLOOR
#   (the results of the grid that made the changes) then times that grid's below-floor shapes on the new tables.
# - H100 otherwise: H100_RUNS ("row:fp16", "col:fp32", ...) against cuBLASLt autotuning with the card's overlays on,
#   resumed with the same H100_TAG (or from a committed run: H100_RESUME_FROM); RECHECK=1 keeps RECHECK_S (150) for the
#   floor recheck of a grid the call completes (RECHECK= for a call that cannot).
#   END=570 HGEMM_COMMIT=<sha> [CALL=call1] [RECHECK=1] ... bash scripts/device_next_calls.sh
set -u
export CALL=${CALL:-call1} END=${END:-570}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  [ "$CALL" = call1 ] && export SUITES=1   # a later call resumes the grids only
  RESUME_FROM= TAG=${H200_TAG:?} RUNS=${H200_RUNS:-"row:fp32 col:fp16"} exec bash scripts/device_grids.sh
fi
if [ "$CALL" = call1 ] && [ -n "${SHAPES:-}" ]; then
  OLD=${OLD:?} LAYOUT=${LAYOUT:?} AB_DL=${AB_DL:-75} exec bash scripts/device_ab_changed.sh
fi
RESUME_FROM=${H100_RESUME_FROM:-} TAG=${H100_TAG:?} RUNS=${H100_RUNS:?} RECHECK=${RECHECK-1} RECHECK_S=${RECHECK_S:-150} \
  BASE_COL=cuBLASLt-auto-tuning-tn BASE_ROW=cuBLASLt-auto-tuning-nn exec bash scripts/device_grids.sh
