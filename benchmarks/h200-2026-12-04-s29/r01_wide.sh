#!/usr/bin/env bash
# Session 29, call 3: the repeat-charge pass (r01/tables_borrow: its f32 table and its f16 table with borrowed f32
# choices) beside the committed tables and torch.matmul on 240 more grid shapes, none of them in grid_sample_120
# (sample_240.txt: the rest of the grid shuffled with seed 29), kernel-only, correctness first for every competitor.
#   HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-04-s29/r01_wide.sh     (carry .whl and .carry1)
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s29
for acc in fp32 fp16; do
  timeout --signal=INT --kill-after=20 ${DL:-200} ./eval_one_file.sh --grid $S/sample_240.txt \
    --acc_precise $acc --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/wide_$acc --gpu_device_id 0 \
    --mode offline --timing kernel --b_layout col --baselines torch.matmul --also_tables r01=$S/r01/tables_borrow \
    > $OUT/wide_$acc.log 2>&1
  echo "$acc eval rc=$? at $(el)s" >> $OUT/rc.txt
  python3 scripts/geomean_over_torch.py $OUT/wide_$acc/results.json >> $OUT/rc.txt 2>&1
done
cat $OUT/env.txt $OUT/rc.txt
pack_out call3
