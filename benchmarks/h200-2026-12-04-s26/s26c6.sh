#!/usr/bin/env bash
# Session 26, call 6: gemmex_capture_repro.py, each variant in a fresh process, with the CUDA error log.
set -u
source scripts/device_prologue.sh
for v in control judge judge_eager judge_bound judge_raw; do
  CUDA_LOG_FILE=$OUT/log_$v.txt timeout 90 python3 benchmarks/h200-2026-12-04-s26/gemmex_capture_repro.py $v > $OUT/$v.txt 2>&1
  echo "$v rc=$? at $(el)s: $(tail -1 $OUT/$v.txt) | refused frees $(grep -c 'from cuMemFree' $OUT/log_$v.txt)" >> $OUT/rc.txt
done
cat $OUT/rc.txt
pack_out call6
