#!/usr/bin/env bash
# Session 26, call 5: call 4 showed torch's allocator made no device free inside the failed captures, and call 3 that
# relaxing our whole GemmEx call does not help. free_tracer.so (LD_PRELOAD) prints the native + Python stack of the
# refused cudaFree.
set -u
source scripts/device_prologue.sh
gcc -shared -fPIC -O1 -o /tmp/free_tracer.so benchmarks/h200-2026-12-04-s26/free_tracer.c -ldl
LD_PRELOAD=/tmp/free_tracer.so HGEMM_ARMS_RELAXED_SCOPE=0 timeout --signal=INT 120 python3 \
  benchmarks/h200-2026-12-04-s26/capture_diag.py f32 row torch.matmul,cuBLASLt-auto-tuning-nn global ${NSHAPES:-5} \
  $OUT/diag_tr.json > $OUT/diag_tr.txt 2>&1
echo "rc=$? at $(el)s" >> $OUT/rc.txt
grep -c "refused during capture" $OUT/diag_tr.txt >> $OUT/rc.txt
awk '/refused during capture/{c++} c==1' $OUT/diag_tr.txt | head -60 >> $OUT/rc.txt
cat $OUT/rc.txt
