#!/usr/bin/env bash
# The A/B of the entries a session's grids changed in this card's overlays (first written as session 48's
# ab_changed.sh): the tree's overlays against those of OLD (a kernels/tables folder of the commit before, carried with
# the tree), each merged over its tables, both roles, in the layouts named (scripts/h200_ab_layouts.sh). OLD is made
# here with
#   mkdir -p sNNab && git archive <sha before> kernels/tables | tar x -C sNNab && mv sNNab/kernels/tables sNNab/old_tables
# SHAPES: the prefix of the changed entries' shape files (<prefix>_<f32|f16>_<col|row>.txt, tuner.table_diff --out).
#   OLD=sNNab/old_tables SHAPES=benchmarks/<session>/shapes/changed LAYOUT=row AB_DL=150 CALL=callN HGEMM_COMMIT=<sha> \
#     bash scripts/device_ab_changed.sh
# FLOOR: the results of the grid whose recheck made the changes (benchmarks/<session>/callN/grid_<layout>/<acc>/
#   results.json.gz): its shapes below 0.97x are then timed again on the tree's tables, the A/B's candidate, into
#   floor_<layout>_<acc>/ (scripts/floor_recheck.sh, 3 rounds in FLOOR_S seconds, default 120), against the
#   baselines that grid timed (torch.matmul and, on an H100, the autotuner of its layout): whether the changes lift
#   the floor, which the A/B of all of them averages away (session 62's call 6: 4 shapes below the autotuner in every
#   round before, 1 after).
set -u
source scripts/device_prologue.sh
OLD=${OLD:?} SHAPES=${SHAPES:?} \
  LAYOUTS=${LAYOUT:-col} AB_DL=${AB_DL:-75} BENCH_S=0.3; source scripts/h200_ab_layouts.sh
if [ -n "${FLOOR:-}" ] && [[ $FLOOR =~ grid_(col|row)/(fp32|fp16)/ ]]; then
  layout=${BASH_REMATCH[1]} acc=${BASH_REMATCH[2]}
  OUT=$OUT/floor_${layout}_$acc FIRST=$FLOOR B_LAYOUT=$layout ACC=$acc BASELINES= ROUNDS=3 \
    DEADLINE=${FLOOR_S:-120} bash scripts/floor_recheck.sh > /tmp/floor_console.txt 2>&1
  echo "floor recheck $layout $acc rc=$? at $(el)s: $(head -1 $OUT/floor_${layout}_$acc/summary.txt 2>/dev/null)" \
    >> $OUT/rc.txt
elif [ -n "${FLOOR:-}" ]; then
  echo "FLOOR=$FLOOR is not a grid_<layout>/<acc>/ results file: no floor recheck" >> $OUT/rc.txt
fi
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt; sed -n 4,30p $OUT/floor_*/summary.txt 2>/dev/null
pack_out ${CALL:-call1}
