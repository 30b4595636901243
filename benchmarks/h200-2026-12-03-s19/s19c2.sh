#!/usr/bin/env bash
# Session 19, call 2 (nvidia-h200, carry .whl + .carry1 (tables pack)): the twin sweep in the other direction, for
# the col entries: per col shape whose entry does not run the col twin of its row entry's choice (graph or eager
# role), those twins beside the tables' choice, torch.matmul and cuBLAS TN, one interleaved run per accumulator
# (`python -m tuner.twin_sweep --acc A --layout col`, less the 3 twins not in the tables pack; 1e9-1e11 FLOP first,
# then < 1e9, then > 1e11, each by FLOP; col_twins_<acc>.txt). tuner.confirm writes the corrected copy of each table.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s19
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
left=$(( ${END:-570} - $(el) - 30 ))
OUT=$OUT/sweep_col LIST_fp32=$S/col_twins_f32.txt LIST_fp16=$S/col_twins_f16.txt B_LAYOUT=col \
  DEADLINE_fp32=$(( left * 43 / 100 )) DEADLINE_fp16=$(( left * 57 / 100 )) SKIP_ENV=1 \
  bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "col sweep done at $(el)s" >> $OUT/rc.txt
W=/tmp/h200_twin_sweep; mkdir -p $W/cand
for a in f32 f16; do cp $W/confirmed_sm90_$a.json $W/cand/sm90_$a.json 2>/dev/null || cp kernels/tables/sm90_$a.json $W/cand/; done
python3 -m tuner.table_diff kernels/tables $W/cand --out $OUT/ab > $OUT/table_diff.txt 2>&1
echo "changed: $(wc -l $OUT/ab_f*_col.txt $OUT/ab_f*_row.txt 2>/dev/null | tr '\n' ' ')" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
pack_out call2
