#!/usr/bin/env bash
# Session 47's call 5 (an H100; carry .whl .carry7): the 7 entries this session's grids changed in the H100 overlays
# (1 f32 row, 6 f16 col: call5/shapes/), the overlays after (the tree's) against those before, both roles
# (scripts/h200_ab_layouts.sh). OLD: a folder in the tree holding kernels/tables as of ce9ffd9, made here with
#   mkdir -p s47ab && git archive ce9ffd9 kernels/tables | tar x -C s47ab && mv s47ab/kernels/tables s47ab/old_tables
#   OLD=s47ab/old_tables HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s47/ab_changed.sh     # ~80 s
set -u
source scripts/device_prologue.sh
OLD=${OLD:?} SHAPES=benchmarks/h100-2026-12-06-s47/call5/shapes/changed LAYOUTS="row col" \
  AB_DL=${AB_DL:-30} BENCH_S=0.3; source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call5}
