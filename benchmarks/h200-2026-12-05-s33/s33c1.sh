#!/usr/bin/env bash
# Written in session 33 (no device was lent) for the next session with one, call 1 — session 32's calls 1 and 2
# (s32n1.sh, s32n2.sh) and the suites of s32n3.sh in one call, now that one .tar.xz pack (3.1 MB) holds every variant
# they run: the capped splitk twins' SASS; the kernel suite over the committed tables' variants and both capped sets;
# the dispatch suites over the committed tables (not run since 45c7cb4 changed them); then make_s32_cand.py's col
# A/B (every splitk graph choice the 4 MiB rule leaves, on its 64 KB-capped twin: 30 f32 / 44 f16 shapes) and row
# A/B (all 34 / 38 such splitk choices and 80 sampled of the 173 / 224 sm90 ones), both roles. Worst case by the
# deadlines: ~20 + 90 + 90 + 4 x 40 + 4 x 55 = 580 s; measured parts (session 31): suites ~60 s, A/Bs ~80 + ~180 s.
# Each A/B's verdicts split by family (ab_by_family.py) land in by_family_<layout>.txt. Carry .whl and .carry7
# (kernel_cache_all.tar.xz and candCap2). Returns env.txt, rc.txt, call1.tgz.
set -u
source scripts/device_prologue.sh
OBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for so in .cache/hgemm/lib/splitk_f32_col_t64x64x64_s8_cl_a8_pdl_l2pf64k-*.so \
          .cache/hgemm/lib/splitk_f32_col_t64x64x64_s4_a8_pdl_l2pf64k-*.so \
          .cache/hgemm/lib/splitk_f32_col_t64x64x64_s8_cl_a8_pdl-*.so; do
  echo "$(basename $so): UTMAPF $($OBJDUMP -sass $so 2>/dev/null | grep -c UTMAPF)" >> $OUT/rc.txt
done
OUT=$OUT SET=tables,l2_prefetch_splitk_capped,l2_prefetch_capped_row KERNEL_S=90 DISPATCH_S=90 \
  bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
CAND=$PWD/.carry7/candCap2 SHAPES=benchmarks/h200-2026-12-05-s32/cap2
# after each layout's A/B, its per-shape verdicts by family and prefetched bytes (both roles' runs are in /tmp/h200_ab)
for layout_dl in col:40 row:55; do
  AB_DL=${layout_dl#*:} LAYOUTS=${layout_dl%:*}; source scripts/h200_ab_layouts.sh
  PYTHONPATH=. python3 benchmarks/h200-2026-12-05-s32/ab_by_family.py /tmp/h200_ab $CAND $LAYOUTS \
    > $OUT/by_family_$LAYOUTS.txt 2>&1
done
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
cat $OUT/by_family_col.txt $OUT/by_family_row.txt
pack_out ${CALL:-call1}
