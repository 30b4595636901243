#!/usr/bin/env bash
# Session 25, call 3 (nvidia-h200; carry .whl + .carry1 + .carry2): why `ours` fell back from CUDA-graph replay to
# event timing on 4-6% of the shapes in calls 1-2's grids (beside cuBLASLt autotuning; never beside cuBLAS alone in
# session 24). The first shapes of the shuffled row f32 / col f16 orders, with each baseline set; GraphSampler now
# records the capture's exception (info.capture_error).
set -u
source scripts/device_prologue.sh
python3 -c "import random,sys; s=open(sys.argv[1]).read().split(); random.Random(0).shuffle(s); print(*s[:${NSHAPES:-30}], sep='\n')" \
  tuner/grids/grid_1000.txt > /tmp/diag_grid.txt
run() {  # name acc layout baselines
  timeout --signal=INT 150 ./eval_one_file.sh --grid /tmp/diag_grid.txt --acc_precise $2 --warmup_seconds 0.05 \
    --benchmark_seconds 0.1 --base_dir $OUT/$1 --gpu_device_id 0 --mode offline --timing kernel --b_layout $3 \
    --baselines $4 > $OUT/$1.log 2>&1
  echo "$1 rc=$? at $(el)s" >> $OUT/rc.txt
  python3 - $OUT/$1/results.json >> $OUT/rc.txt <<'PY'
import collections, json, sys
shapes = json.load(open(sys.argv[1]))["shapes"]
methods = collections.Counter((n, c["info"].get("kernel_method")) for s in shapes for n, c in s["competitors"].items())
print("  ", len(shapes), "shapes", dict(methods))
for s in shapes:
    for n, c in s["competitors"].items():
        if c["info"].get("capture_error"):
            print("  ", s["mnk"], n, c["info"].get("kernel"), "|", c["info"]["capture_error"][:300])
PY
}
run lt_row_f32 fp32 row torch.matmul,cuBLASLt-auto-tuning-nn
run nn_row_f32 fp32 row torch.matmul,cuBLAS-nn
run lt_col_f16 fp16 col torch.matmul,cuBLASLt-auto-tuning-tn
cat $OUT/rc.txt
pack_out call3
