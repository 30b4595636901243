#!/usr/bin/env bash
# Session 22, call 3 (nvidia-h200, carry .whl + .carry1 + .carry2 (tables_row pack, the loop guard's 8 variants)):
# the grids of the committed tables with the loop guard on, f32: col (shuffled, session 11's order) then row, against
# torch.matmul and the layout's cuBLAS form, with ours[prev] beside ours: the tables before the loop guard (call 2's
# base), interleaved in the same run; deadlines from the time left (END). Call 4: the same with ACCS=fp16 CALL=call4.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
P=/tmp/prev_tables; mkdir -p $P
for f in benchmarks/h200-2026-12-03-s22/call2/base_tables/*.gz; do gunzip -c $f > $P/$(basename $f .gz); done
DL=$(( (${END:-560} - $(el)) * ${COL_SHARE:-55} / 100 - 12 ))
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 ACCS=${ACCS:-fp32} \
  BASELINES=torch.matmul,cuBLAS-tn ALSO_TABLES=prev=$P STATE=/tmp/s22c3_col SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_col_console.txt 2>&1
echo "grid col (deadline $DL s) rc=$? at $(el)s" >> $OUT/rc.txt
DL=$(( ${END:-560} - $(el) - 25 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 ACCS=${ACCS:-fp32} \
  B_LAYOUT=row BASELINES=torch.matmul,cuBLAS-nn ALSO_TABLES=prev=$P STATE=/tmp/s22c3_row SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_row_console.txt 2>&1
echo "grid row (deadline $DL s) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|prev|kernel timing|call timing|shapes" $OUT/grid_col/summary.txt $OUT/grid_row/summary.txt | head -60
pack_out ${CALL:-call3}
