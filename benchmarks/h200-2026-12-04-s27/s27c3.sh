#!/usr/bin/env bash
# Session 27, call 3: the long_k experiment (kernels/space.py `long_k`: 256-deep K steps, f32 col, PDL; built on the
# CPU box, carried as .carry3/kernel_cache_long_k.tar.gz) on 34 skinny memory-bound f32 col shapes (long_k_shapes.txt:
# the 24 with the lowest ours / torch.matmul of session 24's col grid among min(M, N) <= 256 and >= 1e9 FLOP, then
# mirrors), beside ours (the committed tables), torch.matmul (B row-major), cuBLAS TN and the 64x128x128 pdl variant.
# Correctness first for every competitor (the eval does it on the timed inputs). Then the new variants' GPU suite.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s27
V=sm90_f32_col_t64x64x256_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x128x256_c1x1_sauto_pp_pers_a8_pdl
V=$V,sm90_f32_col_t128x64x256_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x256x128_c1x1_sauto_pp_pers_a8_pdl
V=$V,sm90_f32_col_t64x128x128_c1x1_sauto_pp_pers_a8_pdl
timeout --signal=INT --kill-after=20 ${DL:-330} ./eval_one_file.sh --grid $S/long_k_shapes.txt --acc_precise fp32 \
  --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/long_k --gpu_device_id 0 --mode offline \
  --timing kernel --b_layout col --baselines torch.matmul,cuBLAS-tn --also_variants $V > $OUT/long_k.log 2>&1
echo "long_k grid rc=$? at $(el)s" >> $OUT/rc.txt
HGEMM_TEST_SET=long_k timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_gpu_kernels.py \
  > $OUT/gpu_long_k.txt 2>&1
echo "long_k kernel suite rc=$?: $(tail -1 $OUT/gpu_long_k.txt) at $(el)s" >> $OUT/rc.txt
python3 - $OUT/long_k/results.json >> $OUT/rc.txt 2>&1 <<'PY'
import json, sys, math
R = json.load(open(sys.argv[1]))
names = None
for s in R["shapes"]:
    c = s["competitors"]
    names = names or sorted(c)
    t = c["torch.matmul"].get("kernel_us")
    row = {k: (round(t / v["kernel_us"], 3) if v.get("ok") and v.get("kernel_us") else None) for k, v in c.items()}
    print(s["mnk"], json.dumps(row))
PY
cat $OUT/env.txt $OUT/rc.txt | tail -45
pack_out ${CALL:-call3}
