#!/usr/bin/env bash
# Session 18, call 1 (nvidia-h200, carry .whl + .carry1 = the tables pack): the GPU kernel suite over the 109
# variants the committed tables run, the fast-path / dispatch / cuBLAS / eval suites, then kernels.launch_anatomy
# (host time of hgemm_run's pieces, timed in C) for the variants the tables run most below 1e9 FLOP.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
OUT=$OUT SET=tables KERNEL_S=${SUITE_S:-110} bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt  # (as run: the same two pytest
echo "suites done at $(el)s" >> $OUT/rc.txt  # commands inline; rc.txt has their lines with the time)
COL=sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8
COL=$COL,sm80_f32_col_t64x64x64_w32x32x64_s5_a8,splitk_f32_col_t64x64x64_s8_cl_a8_pdl
ROW=sm80_f32_row_t64x64x64_w32x32x64_s5_a8,sm90_f32_row_t64x64x128_c1x1_sauto_pp_pers_a8_pdl
for shape in 512x512x1024 128x256x256; do
  timeout 60 python3 -m kernels.launch_anatomy --variants $COL,$ROW --shape $shape --calls 5000 \
    --out $OUT/launch_anatomy_$shape.json > $OUT/launch_anatomy_$shape.txt 2>&1
  echo "launch_anatomy $shape rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
cat $OUT/launch_anatomy_512x512x1024.txt
pack_out call1
