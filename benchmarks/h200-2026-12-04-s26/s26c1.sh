#!/usr/bin/env bash
# Session 26, call 1 (nvidia-h200; carry .whl + .carry1 + .carry2): where the capture of `ours` gets invalidated
# beside cuBLASLt autotuning (session 25, call 3: 11 of the first 40 row f32 shapes timed by events). Each run is a
# fresh process over the same 40 shapes; MODE is torch.cuda.graph's capture_error_mode (global is what the benchmark
# uses; thread_local / relaxed tell an unsafe API call from a failed launch).
set -u
source scripts/device_prologue.sh
for run in "f32 row torch.matmul,cuBLASLt-auto-tuning-nn global" "f32 row torch.matmul,cuBLASLt-auto-tuning-nn thread_local" \
           "f32 row torch.matmul,cuBLASLt-auto-tuning-nn relaxed" "f32 row torch.matmul,cuBLAS-nn global"; do
  set -- $run
  timeout --signal=INT 125 python3 benchmarks/h200-2026-12-04-s26/capture_diag.py $1 $2 $3 $4 ${NSHAPES:-40} \
    $OUT/diag_$2_$1_$3_$4.json > $OUT/diag_$2_$1_$3_$4.txt 2>&1
  echo "$run rc=$? at $(el)s" >> $OUT/rc.txt
  grep -A40 "captures," $OUT/diag_$2_$1_$3_$4.txt | head -40 >> $OUT/rc.txt
done
cat $OUT/rc.txt
pack_out call1
