#!/usr/bin/env bash
# Session 30, call 2: the rule read from call 1 (make_l2pf_cand.py --rule: the l2_prefetch twin only where at most
# 64 CTAs run or a CTA prefetches <= ~100 KB), checked on 100 other changed shapes per accumulator (call 1's sample
# excluded): candidate .carry3/candRule against the committed tables, both roles, col. Carry .whl, .carry1, .carry3.
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry3/candRule
S=benchmarks/h200-2026-12-04-s30/l2rule
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT/ab_col CAND=$CAND SHAPES_fp32=${S}_f32_col.txt SHAPES_fp16=${S}_f16_col.txt B_LAYOUT=col \
  DEADLINE=${AB_DL:-95} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_col_console.txt 2>&1
echo "ab col rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt
pack_out ${CALL:-call2}
