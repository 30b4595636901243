#!/usr/bin/env bash
# Session 48's call 3 (an H100; carry .whl .carry7 .carry8): the entries call 2's split-K run changed in the H100
# overlays (17 f32 / 25 f16, all col: call3/shapes/), the overlays after (the tree's) against those before, both
# roles (scripts/h200_ab_layouts.sh). OLD: a folder in the tree holding kernels/tables as of 7334441, made here with
#   mkdir -p s48ab && git archive 7334441 kernels/tables | tar x -C s48ab && mv s48ab/kernels/tables s48ab/old_tables
#   OLD=s48ab/old_tables HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s48/ab_changed.sh     # ~2 min
# Call 6, the row entries call 5 changed: LAYOUT=row SHAPES_CALL=call6, OLD the tables of b99990e. SHAPES: another
# prefix of shape files (session 49's: benchmarks/h100-2026-12-06-s49/shapes/changed).
set -u
source scripts/device_prologue.sh
OLD=${OLD:?} SHAPES=${SHAPES:-benchmarks/h100-2026-12-06-s48/${SHAPES_CALL:-call3}/shapes/changed} \
  LAYOUTS=${LAYOUT:-col} AB_DL=${AB_DL:-75} BENCH_S=0.3; source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call3}
