#!/usr/bin/env bash
# Session 15, call 2 (nvidia-h200): correctness of what the committed tables run, then the grid in B row-major layout
# (not measured since session 12; the row entries have since taken round 2 of the corrections, splitk and splitk
# cluster choices). Packs: .carry1 (the tables' variants, CPU box), .carry4 (splitk_cluster + _wide, built in call 1).
#  1. the kernel GPU suite over the tables' variants and splitk_cluster; the fast-path / dispatch / cuBLAS suites;
#  2. kernels.overhead with a cluster-launch row (host time per call, moved operands);
#  3. the row grid, shuffled (session 11's order), f32 then f16, DEADLINE s each, against torch.matmul and the NN
#     baselines (cuBLAS-nn, cuBLASLt-auto-tuning-nn): the figures for the row layout, and the data for round 3 of the
#     row corrections (tuner/confirm.py; it needs the tables the run measured: kernels/tables of this commit).
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables,splitk_cluster --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables,splitk_cluster timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite (tables,splitk_cluster) rc=$? at $(el)s: $(tail -1 $OUT/gpu_kernels.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites rc=$? at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
timeout 60 python3 -m kernels.overhead --shape 64x64x4096 --set tables,splitk_cluster --rotate 64 > $OUT/overhead.txt 2>&1
echo "overhead rc=$? at $(el)s" >> $OUT/rc.txt
DL=$(( (560 - $(el)) / 2 - 15 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=row DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn,cuBLASLt-auto-tuning-nn STATE=/tmp/s15c2 SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid row (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
cat $OUT/overhead.txt | tail -25
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_row/summary.txt | head -40
