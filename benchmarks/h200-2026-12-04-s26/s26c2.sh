#!/usr/bin/env bash
# Session 26, call 2 (same warm machine as call 1): the first 8 row f32 shapes beside cuBLASLt autotuning (4 of them
# fail capture in call 1), global capture mode, with the CUDA runtime's error log on (CUDA_LOG_FILE, CUDA >= 12.9):
# which API call invalidated the capture.
set -u
source scripts/device_prologue.sh
CUDA_LOG_FILE=$OUT/cuda_log.txt timeout --signal=INT 120 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py f32 row \
  torch.matmul,cuBLASLt-auto-tuning-nn global 8 $OUT/diag8.json > $OUT/diag8.txt 2>&1
echo "rc=$? at $(el)s" >> $OUT/rc.txt
head -c 3000 $OUT/diag8.txt >> $OUT/rc.txt; echo >> $OUT/rc.txt
python3 -c "import json; [print(r) for r in json.load(open('$OUT/diag8.json'))['methods']]" >> $OUT/rc.txt
wc -l $OUT/cuda_log.txt >> $OUT/rc.txt; sort $OUT/cuda_log.txt | uniq -c | sort -rn | head -30 >> $OUT/rc.txt
cat $OUT/rc.txt
