#!/usr/bin/env bash
# The A/B of the entries a session's grids changed in this card's overlays (first written as session 48's
# ab_changed.sh): the tree's overlays against those of OLD (a kernels/tables folder of the commit before, carried with
# the tree), each merged over its tables, both roles, in the layouts named (scripts/h200_ab_layouts.sh). OLD is made
# here with
#   mkdir -p sNNab && git archive <sha before> kernels/tables | tar x -C sNNab && mv sNNab/kernels/tables sNNab/old_tables
# SHAPES: the prefix of the changed entries' shape files (<prefix>_<f32|f16>_<col|row>.txt, tuner.table_diff --out).
#   OLD=sNNab/old_tables SHAPES=benchmarks/<session>/shapes/changed LAYOUT=row AB_DL=150 CALL=callN HGEMM_COMMIT=<sha> \
#     bash scripts/device_ab_changed.sh
set -u
source scripts/device_prologue.sh
OLD=${OLD:?} SHAPES=${SHAPES:?} \
  LAYOUTS=${LAYOUT:-col} AB_DL=${AB_DL:-75} BENCH_S=0.3; source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
