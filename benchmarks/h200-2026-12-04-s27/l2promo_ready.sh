#!/usr/bin/env bash
# Ready for the next device session (nvidia-h200; carry .whl + .carry1 (tables pack) + .carry3 with
# kernel_cache_l2promo.tar.gz = `python -m kernels.build --set l2promo --jobs 2 --pack
# .carry3/kernel_cache_l2promo.tar.gz`, 80 s on the CPU box): the `l2promo` experiment (kernels/space.py: the pdl
# pingpong tiles the tables run on skinny f32 col shapes, with their TMA loads promoted to L2 in 256-byte instead of
# 128-byte requests) beside their 128-byte twins (in the tables pack), ours, torch.matmul and cuBLAS TN, on the 34
# shapes of call 3 (long_k_shapes.txt), kernel-only, correctness first; then the variants' GPU kernel suite; each
# twin pair's ratio last (s27c3.sh). If a pair differs beyond the run-to-run spread (~1%), tune the l2promo variants
# into the tables the usual way (tuner.tune over those shapes with the set, a retable / confirm round, an A/B in both
# roles).
set -u
V=""
for t in 64x128x64 64x128x128 128x64x64 64x256x64; do
  V=$V,sm90_f32_col_t${t}_c1x1_sauto_pp_pers_a8_l2p256_pdl,sm90_f32_col_t${t}_c1x1_sauto_pp_pers_a8_pdl
done
SET=l2promo V=${V#,} DL=${DL:-400} CALL=${CALL:-call1} bash benchmarks/h200-2026-12-04-s27/s27c3.sh
