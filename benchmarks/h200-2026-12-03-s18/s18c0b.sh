#!/usr/bin/env bash
# Session 18, call 0b (nvidia-h200, carry .whl + .carry0): call 0 put hgemm_run at 2.1-3.5 µs in a C loop, where the
# Python-level host part of our call is ~9 µs. The same pieces three ways in one call, to find the rest:
# launch_anatomy after torch made the context (--torch), kernels.overhead (fast path / Python path / ctypes launcher /
# kernels.gemm / torch.matmul, back to back), call_anatomy --no-replays (the benchmark's sample: sync, call, sync).
set -u
source scripts/device_prologue.sh
COL=sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8
COL=$COL,sm80_f32_col_t64x64x64_w32x32x64_s5_a8,splitk_f32_col_t64x64x64_s8_cl_a8_pdl
timeout 60 python3 -m kernels.launch_anatomy --torch --variants $COL --shape 512x512x1024 --calls 5000 \
  --out $OUT/launch_anatomy_torch.json > $OUT/launch_anatomy_torch.txt 2>&1
echo "launch_anatomy --torch rc=$? at $(el)s" >> $OUT/rc.txt
timeout 90 python3 -m kernels.overhead --shape 512x512x1024 --set tables --rotate 4 --calls 3000 \
  > $OUT/overhead.txt 2>&1
echo "overhead rc=$? at $(el)s" >> $OUT/rc.txt
timeout 120 python3 -m tuner.call_anatomy --shapes 512_512_1024,128_256_256 --acc f32 --no-replays --seconds 1 \
  --variants $COL --out $OUT/call_anatomy.json > $OUT/call_anatomy.txt 2>&1
echo "call_anatomy rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt $OUT/launch_anatomy_torch.txt $OUT/overhead.txt $OUT/call_anatomy.txt
