#!/usr/bin/env bash
# Session 26, call 9: call 8 located the refused cuMemFree inside ours' Python call but outside arms.cu's GemmEx:
# the Python calls made during ours' first captured launch (sys.setprofile), a failing shape beside a working one.
set -u
source scripts/device_prologue.sh
DIAG_PROFILE=1 HGEMM_FASTPATH=0 CUDA_LOG_FILE=$OUT/log.txt timeout --signal=INT 100 python3 \
  benchmarks/h200-2026-12-04-s26/capture_diag.py f32 row torch.matmul,cuBLASLt-auto-tuning-nn global 4 $OUT/d.json > $OUT/d.txt 2>&1
echo "rc=$? at $(el)s" >> $OUT/rc.txt
grep -E "captures,|context:" $OUT/d.txt | cut -c1-6000 >> $OUT/rc.txt
cat $OUT/rc.txt
