#!/usr/bin/env bash
# Session 44's first call, for whichever card comes. H200: session 41's first call (the GPU suites, then the f16 col
# grid, resumable with TAG=s41). H100 (session 43 ran the suites, both f32 grids and 605 f16 row shapes there): the
# GPU suites at this commit (kernels.linear's in-place bias since 75b118b), then the overlays A/B'd whole, both
# accumulators, both layouts (session 43 added 4 f32 and 5 f16 entry changes that no A/B has measured).
# Carry .whl .carry7 .carry3 .carry8.
#   HGEMM_COMMIT=<sha> bash benchmarks/h200-2026-12-06-s44/first_call.sh     # ~560 s
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash benchmarks/h200-2026-12-05-s41/first_call.sh
fi
source scripts/device_prologue.sh
OUT=$OUT SET=tables KERNEL_S=70 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
# overlay_ab.sh sources the prologue again (nothing left to unpack) and packs $OUT, the suites' logs included
ACCS="fp32 fp16" AB_DL=${AB_DL:-55} CALL=${CALL:-call1} bash benchmarks/h100-2026-12-05-s38/overlay_ab.sh
