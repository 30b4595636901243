#!/usr/bin/env bash
# Session 26, call 8: where is the refused cuMemFree? (1) every `ours` call inside a capture wrapped in relaxed mode
# through torch's (dynamic) libcudart; (2) arms.cu's whole GemmEx call relaxed through the driver's
# cuThreadExchangeStreamCaptureMode (call 3 used the runtime's, in the arms library's static cudart: no effect).
set -u
source scripts/device_prologue.sh
for run in "1 0 0" "0 2 1" "0 1 1"; do
  set -- $run
  DIAG_WRAP_RELAXED=$1 HGEMM_ARMS_RELAXED_SCOPE=$2 HGEMM_ARMS_RELAXED_DRIVER=$3 CUDA_LOG_FILE=$OUT/log_$1$2$3.txt \
    timeout --signal=INT 100 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py \
    f32 row torch.matmul,cuBLASLt-auto-tuning-nn global ${NSHAPES:-8} $OUT/d_$1$2$3.json > $OUT/d_$1$2$3.txt 2>&1
  echo "wrap=$1 scope=$2 driver=$3 rc=$? at $(el)s: $(grep captures, $OUT/d_$1$2$3.txt) | refused frees $(grep -c 'from cuMemFree' $OUT/log_$1$2$3.txt)" >> $OUT/rc.txt
done
cat $OUT/rc.txt
pack_out call8
