#!/usr/bin/env bash
# Session 19, call 3 (nvidia-h200, carry .whl + .carry1 + .carry4/cand7 = call 2's col twin sweep corrections on the
# committed tables): cand7 against the committed tables on the col entries it changes (6 f32 / 18 f16), both roles.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s19
OUT=$OUT/ab7 CAND=$PWD/.carry4/cand7 SHAPES_fp32=$S/call2/ab_f32_col.txt SHAPES_fp16=$S/call2/ab_f16_col.txt \
  DEADLINE=40 BENCH_S=0.3 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab7_console.txt 2>&1
echo "ab col rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab7/summary.txt
pack_out call3
