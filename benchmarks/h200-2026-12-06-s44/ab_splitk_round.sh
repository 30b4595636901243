#!/usr/bin/env bash
# Prepared in session 44 for a call on the H200 (nvidia-h200; carry .whl .carry7 .carry3; keep h200-2026-12-06-s44):
# late round 3 of tuner/committed_tables.py (session 44's split-K sweep of call 5, a candidate, off by default)
# A/B'd against the committed tables, both roles, on the col entries it changes (splitk_changed_<acc>_col.txt: 13 f32,
# 4 f16; no new variant: `kernels.build --tables committed,.carry3/cand_splitk --dry-run` 224 cached). Build the
# candidate here first:
#   python -m tuner.committed_tables --late-rounds 3 --out-dir .carry3/cand_splitk
#   HGEMM_COMMIT=<sha> CALL=call1 bash benchmarks/h200-2026-12-06-s44/ab_splitk_round.sh   # ~4 x AB_DL s
# If both roles agree on a gain, set LATE_ROUNDS_BY_DEFAULT = 3 (entries the A/B finds slower would need a revert
# step after the late rounds: today's AB_REVERTS run before them).
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry3/cand_splitk
P=benchmarks/h200-2026-12-06-s44
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT/ab_col CAND=$CAND ACCS="fp32 fp16" SHAPES_fp32=$P/splitk_changed_f32_col.txt \
  SHAPES_fp16=$P/splitk_changed_f16_col.txt B_LAYOUT=col DEADLINE=${AB_DL:-60} BENCH_S=0.3 SKIP_ENV=1 \
  bash scripts/h200_ab.sh > /tmp/ab_col_console.txt 2>&1
echo "ab col (fp32 fp16) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
