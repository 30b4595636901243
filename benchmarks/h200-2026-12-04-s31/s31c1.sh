#!/usr/bin/env bash
# Session 31, call 1 (written in session 31, which had no device; for the next session with one): the splitk
# l2_prefetch twins (kernels/codegen/l2_prefetch_splitk.cuh, set l2_prefetch_splitk) — their SASS holds the TMA L2
# prefetch, the kernel suite over them and over both sm90 twin sets, the dispatch suites over the committed tables;
# then the A/B of .carry4/candS31 (make_s31_cand.py) in the col layout: every splitk col graph choice moved to its
# twin (65 f32 / 80 f16 shapes, all of them), both roles. Carry .whl (without the Locust wheels) and .carry4 (one
# pack of everything the call runs, and the candidate). Returns env.txt, rc.txt, call1.tgz.
set -u
source scripts/device_prologue.sh
OBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for so in .cache/hgemm/lib/splitk_f32_col_t64x64x64_s8_cl_a8_pdl-*.so .cache/hgemm/lib/splitk_f32_col_t64x64x64_s8_cl_a8_pdl_l2pf-*.so \
          .cache/hgemm/lib/splitk_f32_row_t64x64x64_s4_a8_pdl-*.so .cache/hgemm/lib/splitk_f32_row_t64x64x64_s4_a8_pdl_l2pf-*.so; do
  echo "$(basename $so): UTMAPF $($OBJDUMP -sass $so 2>/dev/null | grep -c UTMAPF)" >> $OUT/rc.txt
done
OUT=$OUT SET=l2_prefetch_splitk,l2_prefetch,l2_prefetch_row KERNEL_S=90 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
CAND=$PWD/.carry4/candS31 SHAPES=benchmarks/h200-2026-12-04-s31/l2sk AB_DL=${AB_DL:-50} LAYOUTS=col
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt
pack_out ${CALL:-call1}
