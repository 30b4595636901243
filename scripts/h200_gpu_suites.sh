#!/usr/bin/env bash
# The GPU test suites a device call runs before it times anything, on the H200 host (the kernels already built or
# unpacked into .cache/hgemm):
#   OUT=dir SET=tables [KERNEL_S=110] [DISPATCH_S=80] bash scripts/h200_gpu_suites.sh   # DISPATCH_S=0: kernels only
# 1. the kernel suite over variant set SET (random-normal vs fp64, zero-one, graphs, per variant and shape class);
# 2. the fast-path / dispatch / cuBLAS / eval / launch-anatomy suites (the dispatcher over the committed tables).
# Writes OUT/gpu_kernels.txt and OUT/gpu_dispatch.txt; prints one line per suite (rc, its pytest summary).
set -u
SET=${SET:?set SET to a variant set (kernels/space.py VARIANT_SETS)}
HGEMM_TEST_SET=$SET timeout ${KERNEL_S:-110} python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite ($SET) rc=$?: $(tail -1 $OUT/gpu_kernels.txt)"
[ "${DISPATCH_S:-80}" = 0 ] && exit 0
HGEMM_TEST_SET=$SET timeout ${DISPATCH_S:-80} python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_fastpath.py tests/kernels/test_tensor_reader.py tests/kernels/test_dispatch.py \
  tests/kernels/test_gpu_cublas.py tests/tuner/test_gpu_eval.py tests/kernels/test_launch_anatomy.py \
  tests/kernels/test_torch_op.py tests/kernels/test_linear.py \
  tests/tuner/test_lt_identity.py tests/tuner/test_gpu_overlays.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites rc=$?: $(tail -1 $OUT/gpu_dispatch.txt)"
