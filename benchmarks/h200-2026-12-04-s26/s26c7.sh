#!/usr/bin/env bash
# Session 26, call 7: call 6 did not reproduce the failure outside evaluate_shape (cuBLASLt judge-style captures,
# then our GemmEx arm captured: fine). Which other part of the benchmark is needed: the dispatcher's C fast path
# (HGEMM_FASTPATH=0), the torch.matmul baseline (left out), or does a cuBLAS-nn competitor beside them prevent it?
set -u
source scripts/device_prologue.sh
for run in "1 cuBLASLt-auto-tuning-nn" "0 torch.matmul,cuBLASLt-auto-tuning-nn" "1 cuBLAS-nn,cuBLASLt-auto-tuning-nn" \
           "1 torch.matmul,cuBLASLt-auto-tuning-nn"; do
  set -- $run
  HGEMM_FASTPATH=$1 CUDA_LOG_FILE=$OUT/log_$1_$2.txt timeout --signal=INT 100 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py \
    f32 row $2 global ${NSHAPES:-8} $OUT/d_$1_$2.json > $OUT/d_$1_$2.txt 2>&1
  echo "fastpath=$1 $2 rc=$? at $(el)s: $(grep captures, $OUT/d_$1_$2.txt) | refused frees $(grep -c 'from cuMemFree' $OUT/log_$1_$2.txt)" >> $OUT/rc.txt
done
cat $OUT/rc.txt
pack_out call7
