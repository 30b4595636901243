#!/usr/bin/env bash
# Session 17, call 5 (nvidia-h200, the last ~4 min of the budget): the GPU kernel suite over every variant the
# committed tables run (109, one new with the mid floor: sm90_f32_row_t128x128x64_c2x1_sauto_pp_pers_a8_pdl), then
# the fast-path / dispatch / cuBLAS suites on the committed tables and the eval GPU tests (the per-shape variants need
# the tables_row pack: carry it, or that test skips).
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout ${SUITE_S:-110} python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite (tables) rc=$? at $(el)s: $(tail -1 $OUT/gpu_kernels.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 80 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py \
  tests/tuner/test_gpu_eval.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites rc=$? at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
