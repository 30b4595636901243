#!/usr/bin/env bash
# Session 19, call 1 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack) + .carry3/cand5
# (`python -m tuner.committed_tables --out-dir .carry3/cand5 --confirm-row-rounds 5` at 839a666)):
#  0. the GPU suites over the tables' variants (test_gpu_eval now times an fp32-accumulating variant in an f16 run);
#  1. round 5 of the row corrections (session 18 call 4's full twin sweep) against the committed tables, both roles,
#     B row-major, on the 92 f32 / 110 f16 entries it changes;
#  2. the 64 f16 shapes whose twins all accumulate in fp32 (an f16 run skipped them until c339ac0), swept with round
#     5's tables as `ours`; tuner.confirm's corrections of them (cand6) against cand5, both roles.
set -u
source scripts/device_prologue.sh
S18=benchmarks/h200-2026-12-03-s18; C5=$PWD/.carry3/cand5
python3 -m kernels.build --tables committed,$C5 --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT SET=tables bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
OUT=$OUT/ab5 CAND=$C5 SHAPES_fp32=$S18/round5_ab_f32_row.txt SHAPES_fp16=$S18/round5_ab_f16_row.txt B_LAYOUT=row \
  DEADLINE=${AB_DL:-80} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab5_console.txt 2>&1
echo "ab round 5 rc=$? at $(el)s" >> $OUT/rc.txt
OUT=$OUT/sweep6 TABLES=$C5 LIST_fp16=$S18/twin_sweep_f16_fp32_twins.txt ACCS=fp16 DEADLINE=${SWEEP_DL:-90} SKIP_ENV=1 \
  bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "sweep done at $(el)s" >> $OUT/rc.txt
C6=/tmp/cand6; rm -rf $C6; mkdir -p $C6/tables; cp $C5/sm90_f32.json $C6/tables/
cp /tmp/h200_twin_sweep/confirmed_sm90_f16.json $C6/tables/sm90_f16.json 2>/dev/null || cp $C5/sm90_f16.json $C6/tables/
python3 -m tuner.table_diff $C5 $C6/tables --out $C6/ab > $C6/table_diff.txt 2>&1
mkdir -p $OUT/cand6; cp $C6/ab_*.txt $C6/table_diff.txt $OUT/cand6/; gzip -n -9 -c $C6/tables/sm90_f16.json > $OUT/cand6/sm90_f16.json.gz
n=$(cat $C6/ab_f16_row.txt 2>/dev/null | wc -l); echo "cand6 changes $n f16 row entries" >> $OUT/rc.txt
if [ $n -gt 0 ]; then
  OUT=$OUT/ab6 CAND=$C6/tables BASE=$C5 SHAPES_fp16=$C6/ab_f16_row.txt ACCS=fp16 B_LAYOUT=row DEADLINE=60 BENCH_S=0.2 \
    SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab6_console.txt 2>&1
  echo "ab cand6 rc=$? at $(el)s" >> $OUT/rc.txt
fi
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab5/summary.txt $OUT/ab6/summary.txt 2>/dev/null
grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
pack_out call1
