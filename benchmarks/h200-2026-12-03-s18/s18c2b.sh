#!/usr/bin/env bash
# Session 18, call 2 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack)); the sweep and its
# A/B in one call (device starts were scarce: every refused start cost device time):
#  1. the twin sweep (scripts/h200_twin_sweep.sh): per row shape of 1e9-1e11 FLOP whose entry runs cuBLAS / cuBLASLt,
#     the row twins of the col entry's choices beside the committed tables' choice, torch.matmul and cuBLAS NN, one
#     interleaved run per accumulator; tuner.confirm writes the corrected copy of each table;
#  2. those copies (the candidate: the committed tables + the sweep's corrections) against the committed tables, both
#     roles, B row-major, on every entry they change (tuner.table_diff), deadlines from the time left.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables,tables_row --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
D=benchmarks/h200-2026-12-02-s17; W=/tmp/h200_twin_sweep
OUT=$OUT/sweep LIST_fp32=$D/twin_sweep_lib_f32.txt LIST_fp16=$D/twin_sweep_lib_f16.txt DEADLINE=${DEADLINE:-170} \
  SKIP_ENV=1 bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "sweep done at $(el)s" >> $OUT/rc.txt
C=/tmp/s18_cand; rm -rf $C; mkdir -p $C/tables
for a in f32 f16; do cp $W/confirmed_sm90_$a.json $C/tables/sm90_$a.json 2>/dev/null || cp kernels/tables/sm90_$a.json $C/tables/; done
python3 -m tuner.table_diff kernels/tables $C/tables --out $C/ab > $C/table_diff.txt 2>&1
cp -r $C $OUT/cand
ACCS=""; for a in 32 16; do [ -s $C/ab_f${a}_row.txt ] && ACCS="$ACCS fp$a"; done
left=$(( ${END:-560} - $(el) )); n=$(( $(echo $ACCS | wc -w) * 2 )); [ $n -gt 0 ] && per=$(( left / n )) || per=0
echo "changed row entries: $(wc -l $C/ab_f*_row.txt 2>/dev/null | tr '\n' ' '); A/B of $ACCS at ${per}s per role" >> $OUT/rc.txt
if [ $per -ge 20 ]; then
  OUT=$OUT/ab_row CAND=$C/tables SHAPES_fp32=$C/ab_f32_row.txt SHAPES_fp16=$C/ab_f16_row.txt ACCS="$ACCS" \
    B_LAYOUT=row DEADLINE=$per BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
  echo "ab row rc=$? at $(el)s" >> $OUT/rc.txt
fi
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_row/summary.txt 2>/dev/null
pack_out call2
