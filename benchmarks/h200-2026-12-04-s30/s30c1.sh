#!/usr/bin/env bash
# Session 30, call 1: the l2_prefetch twins (kernels/space.py set `l2_prefetch`, built here into
# .carry3/kernel_cache_l2pf.tar.gz) — that their SASS holds the TMA L2 prefetch, the kernel suite over them, then the
# A/B of the candidate tables (.carry3/candPF = make_l2pf_cand.py: every col graph choice on an sm90 pdl variant
# swapped for its twin) against the committed ones, both roles, col, on 100 sampled changed shapes per accumulator.
# Carry .whl, .carry1 (tables pack), .carry3. Returns env.txt, rc.txt, call1.tgz.
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry3/candPF
S=benchmarks/h200-2026-12-04-s30/l2pf
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for so in .cache/hgemm/lib/sm90_f32_col_t64x64x64_c1x1_sauto_pp_pers_a8_pdl-*.so \
          .cache/hgemm/lib/sm90_f32_col_t64x64x64_c1x1_sauto_pp_pers_a8_pdl_l2pf-*.so; do
  echo "$(basename $so): UTMAPF $($OBJDUMP -sass $so 2>/dev/null | grep -c UTMAPF)" >> $OUT/rc.txt
done
HGEMM_TEST_SET=l2_prefetch timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite (l2_prefetch) rc=$?: $(tail -1 $OUT/gpu_kernels.txt) at $(el)s" >> $OUT/rc.txt
OUT=$OUT/ab_col CAND=$CAND SHAPES_fp32=${S}_f32_col.txt SHAPES_fp16=${S}_f16_col.txt B_LAYOUT=col \
  DEADLINE=${AB_DL:-95} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_col_console.txt 2>&1
echo "ab col rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt
pack_out ${CALL:-call1}
