#!/usr/bin/env bash
# Session 17, call 2 (nvidia-h200): what session 16 committed without measuring, and call 1's col A/B again (the
# device returns at most 8 files: call 1's col role results did not come back; everything now leaves as one tarball).
#  1. The committed tables (candidate) against session 16's A/B base (.carry6/base16, from
#     benchmarks/h200-2026-12-02-s16/call2/base_tables) on every entry whose choices differ from what that A/B
#     measured (session 16's ab_next_<acc>_<layout>.txt: 68 / 92 col, 29 / 88 row), both roles, col then row;
#  2. --mid-floor 0.97 (.carry6/cand_mid) against the committed tables on the col samples, as in call 1.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s16
python3 -m kernels.build --tables committed,.carry6/base16,.carry6/cand_mid --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=kernels/tables BASE=.carry6/base16 SHAPES_fp32=$S/ab_next_f32_$layout.txt \
    SHAPES_fp16=$S/ab_next_f16_$layout.txt B_LAYOUT=$layout DEADLINE=${AB_DEADLINE:-55} BENCH_S=0.2 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_console_$layout.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
OUT=$OUT/mid_col CAND=.carry6/cand_mid SHAPES_fp32=$S/mid97_sample_f32_col.txt SHAPES_fp16=$S/mid97_sample_f16_col.txt \
  B_LAYOUT=col DEADLINE=45 BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console_mid.txt 2>&1
echo "mid col rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt $OUT/mid_col/summary.txt | grep -v " rc="
tar czf /tmp/call2.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/call2.tgz $OUT/
