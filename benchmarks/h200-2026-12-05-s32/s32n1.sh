#!/usr/bin/env bash
# Written in session 32 for the next session with a device, call 1: the capped splitk twins (set
# l2_prefetch_splitk_capped: at most 64 KB per CTA, kernels/codegen/l2_prefetch_splitk.cuh MaxKTiles / the cluster
# template's bound) — their SASS still holds the prefetch, their kernel suite; then the col A/B of make_s32_cand.py's
# candidate: every col splitk graph choice the rule leaves (the grid would prefetch > 4 MiB) moved to its capped twin
# (30 f32 / 44 f16 shapes), both roles. Carry .whl (without the Locust wheels) and .carry7 (the col tables' and
# candidate's variants plus the whole capped splitk set in one pack, and the candidate). Returns env.txt, rc.txt,
# call1.tgz.
set -u
source scripts/device_prologue.sh
OBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for so in .cache/hgemm/lib/splitk_f32_col_t64x64x64_s8_cl_a8_pdl_l2pf64k-*.so .cache/hgemm/lib/splitk_f32_col_t64x64x64_s4_a8_pdl_l2pf64k-*.so; do
  echo "$(basename $so): UTMAPF $($OBJDUMP -sass $so 2>/dev/null | grep -c UTMAPF)" >> $OUT/rc.txt
done
OUT=$OUT SET=l2_prefetch_splitk_capped KERNEL_S=90 DISPATCH_S=0 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
CAND=$PWD/.carry7/candCap2 SHAPES=benchmarks/h200-2026-12-05-s32/cap2 AB_DL=${AB_DL:-45} LAYOUTS=col
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt
pack_out ${CALL:-call1}
