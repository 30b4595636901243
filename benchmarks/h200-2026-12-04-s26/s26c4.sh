#!/usr/bin/env bash
# Session 26, call 4: call 3 relaxed the capture mode around all of our cuBLAS GemmEx call (arms.cu) and the
# cuMemFree inside ours' capture stayed, so it is not cuBLAS's. Is it torch's allocator? torch's device-free count
# across each failed capture, and its memory history (Python stacks) of the segment frees in it.
set -u
source scripts/device_prologue.sh
DIAG_HISTORY=1 HGEMM_ARMS_RELAXED_SCOPE=1 timeout --signal=INT 150 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py \
  f32 row torch.matmul,cuBLASLt-auto-tuning-nn global ${NSHAPES:-8} $OUT/diag_hist.json > $OUT/diag_hist.txt 2>&1
echo "rc=$? at $(el)s" >> $OUT/rc.txt
head -c 9000 $OUT/diag_hist.txt >> $OUT/rc.txt
cat $OUT/rc.txt
