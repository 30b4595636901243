#!/usr/bin/env bash
# Session 28, call 5: how good is one tuning pass from scratch (calls 2-4, scratch_tune.sh)? Its tables
# (scratch/tables: f32 and f16, col) beside the committed tables (ours), torch.matmul and cuBLAS TN on the 120-shape
# sample of the grid, kernel-only, correctness first for every competitor. Carry .whl and .carry1 (the tables pack:
# the scratch tables run the same 124 variants). Call 6: ACCS=fp16 ALSO=scratch=…/tables,borrow=…/tables_borrow (the f16
# table retabled with faster fp32-accumulating choices borrowed, as scripts/h200_grid.sh does after a pass).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s28
for acc in ${ACCS:-fp32 fp16}; do
  timeout --signal=INT --kill-after=20 ${DL:-150} ./eval_one_file.sh --grid tuner/grids/grid_sample_120.txt \
    --acc_precise $acc --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/scratch_$acc --gpu_device_id 0 \
    --mode offline --timing kernel --b_layout col --baselines torch.matmul,cuBLAS-tn \
    --also_tables ${ALSO:-scratch=$S/scratch/tables} > $OUT/scratch_$acc.log 2>&1
  echo "$acc eval rc=$? at $(el)s" >> $OUT/rc.txt
  python3 scripts/geomean_over_torch.py $OUT/scratch_$acc/results.json >> $OUT/rc.txt 2>&1
done
cat $OUT/env.txt $OUT/rc.txt
pack_out call5
