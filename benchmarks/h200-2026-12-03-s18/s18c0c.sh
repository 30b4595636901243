#!/usr/bin/env bash
# Session 18, call 0c (nvidia-h200, carry .whl + .carry0): host_context.py (our call's and torch.matmul's host part
# in five contexts), and launch_anatomy without and with torch in one call (call 0b's CPU ran every piece ~1.7x
# slower than call 0's: compare only within a call).
set -u
source scripts/device_prologue.sh
COL=sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl,sm80_f32_col_t64x64x64_w32x32x64_s5_a8
for flag in "" --torch; do
  timeout 60 python3 -m kernels.launch_anatomy $flag --variants $COL --shape 512x512x1024 --calls 5000 \
    > $OUT/launch_anatomy$flag.txt 2>&1
  echo "launch_anatomy $flag rc=$? at $(el)s" >> $OUT/rc.txt
done
timeout 150 python3 benchmarks/h200-2026-12-03-s18/host_context.py 512_512_1024 128_256_256 > $OUT/host_context.txt 2>&1
echo "host_context rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt $OUT/launch_anatomy*.txt $OUT/host_context.txt
