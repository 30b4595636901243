#!/usr/bin/env bash
# For the next H100 call (prepared in session 49; carry .whl .carry7 .carry8 s49ab): the H100's dispatch as the tree
# has it against the one of 338b560, on the entries whose merged choice (tables + this card's overlay) changed in
# session 49 (shapes/: 6 f32 col, 5 f16 col): late round 3's H200 picks that the H100 overlay does not correct (6 f32,
# 1 f16) and 4 graph changes of call 4's f16 col grid (its fifth, 512x128x12288, puts back the H100's choice of
# 338b560); both roles (scripts/h200_ab_layouts.sh). OLD: kernels/tables as of 338b560, made here with
#   mkdir -p s49ab && git archive 338b560 kernels/tables | tar x -C s49ab && mv s49ab/kernels/tables s49ab/old_tables
#   OLD=s49ab/old_tables HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s49/ab_changed.sh     # ~1.5 min
set -u
source scripts/device_prologue.sh
OLD=${OLD:?} SHAPES=benchmarks/h100-2026-12-06-s49/shapes/changed LAYOUTS=col AB_DL=${AB_DL:-60} BENCH_S=0.3
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
