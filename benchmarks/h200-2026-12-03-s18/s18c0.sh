#!/usr/bin/env bash
# Session 18, call 0 (nvidia-h200, carry .whl + .carry0 = the first 14 tables variants built here): kernels.launch_anatomy
# (host time of hgemm_run's pieces, timed in C) for variants the tables run most below 1e9 FLOP, early: a change to
# hgemm_run's host path means rebuilding every variant, so it is found out first.
set -u
source scripts/device_prologue.sh
COL=sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8
COL=$COL,sm80_f32_col_t64x64x64_w32x32x64_s5_a8,splitk_f32_col_t64x64x64_s8_cl_a8_pdl
for shape in 512x512x1024 128x256x256; do
  timeout 90 python3 -m kernels.launch_anatomy --variants $COL --shape $shape --calls 5000 \
    --out $OUT/launch_anatomy_$shape.json > $OUT/launch_anatomy_$shape.txt 2>&1
  echo "launch_anatomy $shape rc=$? at $(el)s" >> $OUT/rc.txt
done
timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_launch_anatomy.py > $OUT/gpu_test.txt 2>&1
echo "gpu test rc=$? at $(el)s: $(tail -1 $OUT/gpu_test.txt)" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt $OUT/launch_anatomy_*.txt
