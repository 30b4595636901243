#!/usr/bin/env bash
# Session 39, call 1 (carry .whl .carry7; keep h100-2026-12-05-s38 h200-2026-12-03-s24 h100-2026-12-05-s39), for
# whichever card comes:
# - an H200: the cuBLASLt identities of the tables first (tuner.lt_identity record: the card and cuBLAS the tables
#   were tuned with), then the GPU suites and the f32 row grid (s24grid.sh, SUITES=1);
# - any other card: the GPU suites (the session-38 GPU tests of the identity path and the overlay among them), then
#   the H100 overlay's A/B against the tables without it (h100-2026-12-05-s38/overlay_ab.sh, ~4 x AB_DL s).
set -u
GPU=$(python3 -c "import torch; print(torch.cuda.get_device_name())")
if [ "$GPU" = "NVIDIA H200" ]; then
  export PYTHONPATH=$PWD
  mkdir -p /tmp/s39early
  (source scripts/device_env.sh; timeout 150 python3 -m tuner.lt_identity record --tables kernels/tables \
     --out /tmp/s39early/lt_identities_h200.json > /tmp/s39early/record.txt 2>&1; echo "record rc=$?" >> /tmp/s39early/record.txt)
  SUITES=1 TAG=s39 END=${END:-560} RUNS="row:fp32" CALL=call1_pre bash benchmarks/h200-2026-12-03-s24/s24grid.sh
  cp /tmp/s39early/* $OUT/
  exit 0
fi
(source scripts/device_prologue.sh
 OUT=$OUT SET=tables KERNEL_S=70 DISPATCH_S=110 bash scripts/h200_gpu_suites.sh >> $OUT/suites_rc.txt
 echo "suites done at $(el)s" >> $OUT/suites_rc.txt)
mkdir -p /tmp/s39suites && mv $OUT/gpu_*.txt $OUT/suites_rc.txt /tmp/s39suites/
bash benchmarks/h100-2026-12-05-s38/overlay_ab.sh > /tmp/s39_ab_console.txt 2>&1
cp /tmp/s39suites/suites_rc.txt $OUT/ 2>/dev/null; cat /tmp/s39suites/suites_rc.txt
mkdir -p /tmp/s39x && cp /tmp/s39suites/gpu_*.txt /tmp/s39x/ && tar czf $OUT/suites.tgz -C /tmp/s39x .
tail -30 /tmp/s39_ab_console.txt
