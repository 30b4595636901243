#!/usr/bin/env bash
# Session 31, call 3 (for the next session with a device): the capped l2_prefetch twins (set l2_prefetch_capped: at
# most 64 KB prefetched per CTA, kernels/codegen/l2_prefetch.cuh MaxBytes) — their kernel suite, then the A/B of
# .carry5/candCap (make_s31_cand.py --capped: the col graph choices on sm90 pdl variants that session 30's rule leaves,
# where the full prefetch lost, moved to capped twins; 164 f32 / 216 f16) on 100 sampled per accumulator, both roles.
# Carry .whl (without the Locust wheels) and .carry5 (the tables and the capped twins in one pack, and the candidate).
set -u
source scripts/device_prologue.sh
HGEMM_TEST_SET=l2_prefetch_capped timeout 90 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite (l2_prefetch_capped) rc=$?: $(tail -1 $OUT/gpu_kernels.txt) at $(el)s" >> $OUT/rc.txt
CAND=$PWD/.carry5/candCap SHAPES=benchmarks/h200-2026-12-04-s31/l2cap AB_DL=${AB_DL:-60} LAYOUTS=col
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt
pack_out ${CALL:-call3}
