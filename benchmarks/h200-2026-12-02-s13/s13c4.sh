#!/usr/bin/env bash
# Session 13, call 4 (nvidia-h200): the committed tables now name four splitk variants (graph choices). The kernel GPU
# suite over every variant the image builds (default, wide_pdl_mid, tables_row, splitk), and the fast-path, dispatch
# and cuBLAS suites over the committed tables (captured calls dispatch to the splitk entries).
set -u
source scripts/device_prologue.sh
SETS=default,wide_pdl_mid,tables_row,splitk
python3 -m kernels.build --set $SETS,tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=$SETS timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=230 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite ($SETS) at $(el)s: $(tail -1 $OUT/gpu_kernels.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=95 \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
