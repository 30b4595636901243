#!/usr/bin/env bash
# Prepared in session 40 (no H200 came) for a call on the H200 (nvidia-h200; carry .whl .carry7 .carry3; keep
# h200-2026-12-05-s40-prep): the late rounds of tuner/committed_tables.py (LATE_ROUNDS: session 39's grids of the
# finished tables, applied after the A/B reverts and the twins) A/B'd against the committed tables, both roles, on
# the entries whose choice they change (late_changed_<acc>_<layout>.txt: f32 0 col / 1 row, f16 9 col / 3 row; no new
# variant: `kernels.build --tables committed,.carry3/cand_late --dry-run` 225 cached). Build the candidate here first:
#   python -m tuner.committed_tables --late-rounds 2 --out-dir .carry3/cand_late
#   HGEMM_COMMIT=<sha> CALL=call1 bash benchmarks/h200-2026-12-05-s40-prep/ab_late_rounds.sh   # ~4 x AB_DL s
# If both roles agree on a gain, set LATE_ROUNDS_BY_DEFAULT = 2 and list the A/B in AB_REVERTS' way (a revert step
# after the late rounds would be needed for entries the A/B finds slower: today's AB_REVERTS run before them).
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry3/cand_late
P=benchmarks/h200-2026-12-05-s40-prep
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
for layout in col row; do
  accs=""
  for acc in f32 f16; do [ -s $P/late_changed_${acc}_$layout.txt ] && accs="$accs fp${acc#f}"; done
  [ -n "$accs" ] || continue
  OUT=$OUT/ab_$layout CAND=$CAND ACCS="$accs" SHAPES_fp32=$P/late_changed_f32_$layout.txt \
    SHAPES_fp16=$P/late_changed_f16_$layout.txt B_LAYOUT=$layout DEADLINE=${AB_DL:-60} BENCH_S=0.3 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout ($accs) rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
