#!/usr/bin/env bash
# Session 23, call 1 (nvidia-h200, carry .whl + .carry1 (tables pack, 124 variants) + .carry2 (tables_row pack)):
#  1. the kernel suite over the tables' variants and tables_row (random-normal vs fp64, zero-one, graphs), then the
#     fast-path / tensor-reader / dispatch / cuBLAS / eval / launch-anatomy suites;
#  2. the interleaving-order check (session 22's tuner.timing.order_rng): the committed tables as `ours` and again as
#     `ours[same]` on 150 shuffled grid shapes, f32 col, beside torch.matmul; per call should be ~1.00x;
#  3. the canonical grid of the committed tables, f32 col (ours, torch.matmul, cuBLAS TN only), shuffled, resumable
#     from STATE=/tmp/s23_col_fp32 by the next call.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT SET=tables,tables_row KERNEL_S=150 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
shuf -n 150 --random-source=<(yes) tuner/grids/grid_1000.txt > /tmp/s150.txt
timeout --signal=INT --kill-after=20 ${SAME_S:-170} ./eval_one_file.sh --grid /tmp/s150.txt --acc_precise fp32 \
  --also_tables same=kernels/tables --baselines torch.matmul --timing both --warmup_seconds 0.05 \
  --benchmark_seconds 0.2 --base_dir $OUT/same --gpu_device_id 0 --mode offline > $OUT/same_console.txt 2>&1
echo "same-tables check rc=$? at $(el)s" >> $OUT/rc.txt
python3 -m tuner.summary --results $OUT/same/results.csv --out $OUT/same/summary > $OUT/same/summary.txt 2>&1
DL=$(( ${END:-570} - $(el) - 25 ))
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 ACCS=fp32 \
  BASELINES=torch.matmul,cuBLAS-tn STATE=/tmp/s23_col SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_col_console.txt 2>&1
echo "grid col fp32 (deadline $DL s) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "ours|torch.matmul|same|shapes" $OUT/same/summary.txt | head -30
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing|shapes" $OUT/grid_col/summary.txt | head -30
pack_out call1
