#!/usr/bin/env bash
# Written in session 32 for the next session with a device, call 3: the GPU suites over the committed tables (45c7cb4
# on: the l2_prefetch twins in both layouts, splitk and capped twins — session 32 ran them over 749b1e8's only), then
# the f16 row grid of those tables in the time left (s24grid.sh, which sources the prologue again: ~10 s; a later
# call on the same warm machine with the same TAG resumes it, or runs RUNS="col:fp16"). Carry .whl (without the Locust
# wheels) and .carry6 (the tables' 190 variants).
set -u
source scripts/device_prologue.sh
OUT=$OUT SET=tables KERNEL_S=${KERNEL_S:-150} DISPATCH_S=${DISPATCH_S:-100} \
  bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
RUNS=${RUNS:-row:fp16} END=$(( ${END:-570} - $(el) )) TAG=${TAG:-s33} CALL=${CALL:-call3} \
  bash benchmarks/h200-2026-12-03-s24/s24grid.sh
