#!/usr/bin/env bash
# Session 30, call 4: the GPU suites over the committed tables (col graph choices on l2_prefetch twins since 58d048a)
# and the kernel suite over both twin sets; then the row twins (set l2_prefetch_row, built here into
# .carry3/kernel_cache_l2pf_row.tar.gz): candidate .carry3/candRow = `python -m tuner.prefetch_twins --b-layout row`
# over the committed tables (col's rule, 291 f32 / 309 f16 row graph choices), A/B both roles on 80 of them per
# accumulator (l2row_<acc>_row.txt). Carry .whl, .carry1, .carry3.
set -u
source scripts/device_prologue.sh
OUT=$OUT SET=l2_prefetch,l2_prefetch_row KERNEL_S=60 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
CAND=$PWD/.carry3/candRow SHAPES=benchmarks/h200-2026-12-04-s30/l2row AB_DL=${AB_DL:-70} LAYOUTS=row
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_row/summary.txt
pack_out ${CALL:-call4}
