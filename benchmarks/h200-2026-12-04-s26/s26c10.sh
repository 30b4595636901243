#!/usr/bin/env bash
# Session 26, call 10: the fixes. (1) arms.cu creates its cuBLAS handles with the thread's capture mode relaxed: a
# first GemmEx call made inside a capture (repro variant `cold`); (2) the dispatcher warms a shape's graph choice on
# its first eager call even when select() filled the cache before (the benchmark's path): the 40 row f32 shapes of
# call 1 beside cuBLASLt autotuning, global capture mode, expect 0 failed captures; (3) the GPU suites touched.
set -u
source scripts/device_prologue.sh
CUDA_LOG_FILE=$OUT/log_cold.txt timeout 90 python3 benchmarks/h200-2026-12-04-s26/gemmex_capture_repro.py cold > $OUT/cold.txt 2>&1
echo "cold rc=$? at $(el)s: $(tail -1 $OUT/cold.txt) | refused frees $(grep -c 'from cuMemFree' $OUT/log_cold.txt)" >> $OUT/rc.txt
CUDA_LOG_FILE=$OUT/log_diag.txt timeout --signal=INT 120 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py \
  f32 row torch.matmul,cuBLASLt-auto-tuning-nn global 40 $OUT/diag40.json > $OUT/diag40.txt 2>&1
echo "diag40 rc=$? at $(el)s: $(grep captures, $OUT/diag40.txt) | refused frees $(grep -c 'from cuMemFree' $OUT/log_diag.txt)" >> $OUT/rc.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_dispatch.py tests/kernels/test_fastpath.py \
  tests/kernels/test_gpu_cublas.py tests/tuner/test_gpu_eval.py > $OUT/gpu_tests.txt 2>&1
echo "gpu suites rc=$?: $(tail -1 $OUT/gpu_tests.txt) at $(el)s" >> $OUT/rc.txt
cat $OUT/rc.txt
pack_out call10
