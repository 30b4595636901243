#!/usr/bin/env bash
# Ready for the next device session (nvidia-h200; carry .whl + .carry1 (tables pack) + .carry3 with
# kernel_cache_l2promo.tar.gz = `python -m kernels.build --set l2promo --jobs 2 --pack
# .carry3/kernel_cache_l2promo.tar.gz`, 80 s on the CPU box): the `l2promo` experiment (kernels/space.py: the pdl
# pingpong tiles the tables run on skinny f32 col shapes, with their TMA loads promoted to L2 in 256-byte instead of
# 128-byte requests) beside their 128-byte twins (in the tables pack), ours, torch.matmul and cuBLAS TN, on the 34
# shapes of call 3 (long_k_shapes.txt), kernel-only, correctness first; then the variants' GPU kernel suite. If a
# twin pair differs beyond the run-to-run spread (~1%), tune the l2promo variants into the tables the usual way
# (tuner.tune over those shapes with the set, a retable / confirm round, an A/B in both roles).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s27
V=""
for t in 64x128x64 64x128x128 128x64x64 64x256x64; do
  V=$V,sm90_f32_col_t${t}_c1x1_sauto_pp_pers_a8_l2p256_pdl,sm90_f32_col_t${t}_c1x1_sauto_pp_pers_a8_pdl
done
timeout --signal=INT --kill-after=20 ${DL:-400} ./eval_one_file.sh --grid $S/long_k_shapes.txt --acc_precise fp32 \
  --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/l2promo --gpu_device_id 0 --mode offline \
  --timing kernel --b_layout col --baselines torch.matmul,cuBLAS-tn --also_variants ${V#,} > $OUT/l2promo.log 2>&1
echo "l2promo grid rc=$? at $(el)s" >> $OUT/rc.txt
HGEMM_TEST_SET=l2promo timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_gpu_kernels.py \
  > $OUT/gpu_l2promo.txt 2>&1
echo "l2promo kernel suite rc=$?: $(tail -1 $OUT/gpu_l2promo.txt) at $(el)s" >> $OUT/rc.txt
python3 - $OUT/l2promo/results.json >> $OUT/rc.txt 2>&1 <<'PY'
import json, math, sys
R = json.load(open(sys.argv[1]))
pairs = {}
for s in R["shapes"]:
    c = s["competitors"]
    for name, v in c.items():
        if name.endswith("_l2p256_pdl") and v.get("ok"):
            twin = c.get(name.replace("_l2p256", ""))
            if twin and twin.get("ok"):
                pairs.setdefault(name, []).append(twin["kernel_us"] / v["kernel_us"])
for name, r in pairs.items():
    print(f"{name}: 256-byte promotion faster by {math.exp(sum(map(math.log, r)) / len(r)):.4f}x over {len(r)} "
          f"shapes (range {min(r):.3f}-{max(r):.3f})")
PY
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call1}
