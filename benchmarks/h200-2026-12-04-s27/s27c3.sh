#!/usr/bin/env bash
# Session 27, call 3: the long_k experiment (kernels/space.py `long_k`: 256-deep K steps, f32 col, PDL; built on the
# CPU box, carried as .carry3/kernel_cache_long_k.tar.gz) on 34 skinny memory-bound f32 col shapes (long_k_shapes.txt:
# the 24 with the lowest ours / torch.matmul of session 24's col grid among min(M, N) <= 256 and >= 1e9 FLOP, then
# mirrors), beside ours (the committed tables), torch.matmul (B row-major), cuBLAS TN and the 64x128x128 pdl variant.
# Correctness first for every competitor (the eval does it on the timed inputs). Then the new variants' GPU suite.
# SET / V override the variant set and the ours:NAME competitors (l2promo_ready.sh); a variant whose name minus
# "_l2p256" is also timed gets a twin line: the geomean of twin / variant.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s27
SET=${SET:-long_k}
if [ -z "${V:-}" ]; then
  V=sm90_f32_col_t64x64x256_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x128x256_c1x1_sauto_pp_pers_a8_pdl
  V=$V,sm90_f32_col_t128x64x256_c1x1_sauto_pp_pers_a8_pdl,sm90_f32_col_t64x256x128_c1x1_sauto_pp_pers_a8_pdl
  V=$V,sm90_f32_col_t64x128x128_c1x1_sauto_pp_pers_a8_pdl
fi
timeout --signal=INT --kill-after=20 ${DL:-330} ./eval_one_file.sh --grid $S/long_k_shapes.txt --acc_precise fp32 \
  --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/$SET --gpu_device_id 0 --mode offline \
  --timing kernel --b_layout col --baselines torch.matmul,cuBLAS-tn --also_variants $V > $OUT/$SET.log 2>&1
echo "$SET grid rc=$? at $(el)s" >> $OUT/rc.txt
HGEMM_TEST_SET=$SET timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_gpu_kernels.py \
  > $OUT/gpu_$SET.txt 2>&1
echo "$SET kernel suite rc=$?: $(tail -1 $OUT/gpu_$SET.txt) at $(el)s" >> $OUT/rc.txt
python3 - $OUT/$SET/results.json >> $OUT/rc.txt 2>&1 <<'PY'
import json, math, sys
R = json.load(open(sys.argv[1]))
twins = {}
for s in R["shapes"]:
    c = s["competitors"]
    t = c["torch.matmul"].get("kernel_us")
    row = {k: (round(t / v["kernel_us"], 3) if v.get("ok") and v.get("kernel_us") else None) for k, v in c.items()}
    print(s["mnk"], json.dumps(row))
    for name, v in c.items():
        twin = c.get(name.replace("_l2p256", "")) if "_l2p256" in name else None
        if twin and twin.get("ok") and v.get("ok"):
            twins.setdefault(name, []).append(twin["kernel_us"] / v["kernel_us"])
for name, r in twins.items():
    print(f"{name}: faster than its twin by {math.exp(sum(map(math.log, r)) / len(r)):.4f}x over {len(r)} shapes "
          f"(range {min(r):.3f}-{max(r):.3f})")
PY
cat $OUT/env.txt $OUT/rc.txt | tail -45
pack_out ${CALL:-call3}
