#!/usr/bin/env bash
# Session 35 (prepared without a device): the `small_k` set (kernels/space.py: 128x128 and 64x256 pingpong tiles in
# 2x2 clusters, 128x128 in 1x2, pdl, f32, both layouts) on the large outputs with a short K, where cuBLASLt's
# algorithms hold the tables and sit at 0.46-0.55 of the roofline (session 34). Per layout (default col, then row):
#   0. the GPU kernel suite of small_k (new, never run): the sweep runs only if it passes;
#   1. scripts/h200_twin_sweep.sh with the list `python -m tuner.set_sweep --set small_k --acc f32 --layout L --rank
#      <session 32's grid>` wrote (small_k_f32_<layout>.txt: 102 shapes, K <= 256, >= 264 output tiles of 128x128,
#      worst first): each shape's three variants timed kernel-only beside the committed tables (ours), torch.matmul
#      and the layout's cuBLAS form in one interleaved run, every competitor checked against fp64 first; then
#      tuner.confirm on a copy of the tables (how many graph choices the run would correct);
#   2. rc.txt: per layout, the shapes timed, the geomean of the best small_k variant over ours, the shapes where one
#      ran >= 3% faster (what tuner.confirm corrects), and the best variant by count.
#   HGEMM_COMMIT=<sha> CALL=callN bash benchmarks/h200-2026-12-05-s35/small_k.sh   # carry .whl .carry7 .carry9; ~7 min
# .carry9 = python -m kernels.build --set small_k --pack .carry9/kernel_cache_small_k.tar.xz (6 variants); .carry7 the
# tables' variants (ours). LAYOUTS (default "col row"), DL seconds of sweep per layout (170).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-05-s35
echo "start: $(python3 -m kernels.build --set small_k --dry-run | tail -1)" >> $OUT/rc.txt
echo "tables: $(python3 -m kernels.build --tables committed --dry-run | tail -1) (ours in the sweep)" >> $OUT/rc.txt
HGEMM_TEST_SET=small_k timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -x \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_small_k.txt 2>&1
rc=$?
echo "kernel suite (small_k) rc=$rc at $(el)s: $(tail -1 $OUT/gpu_kernels_small_k.txt)" >> $OUT/rc.txt
if [ $rc != 0 ]; then pack_out ${CALL:-call}; exit 0; fi
for layout in ${LAYOUTS:-col row}; do
  OUT=$OUT/$layout B_LAYOUT=$layout ACCS=fp32 LIST_fp32=$S/small_k_f32_$layout.txt DEADLINE=${DL:-170} \
    TIMING=kernel SKIP_ENV=1 bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
  echo "sweep $layout done at $(el)s" >> $OUT/rc.txt
  python3 - /tmp/h200_twin_sweep/fp32/results.json $layout >> $OUT/rc.txt <<'PY'
import collections, math, os, sys
from tuner.results import read_json
path, layout = sys.argv[1:]
shapes = read_json(path)["shapes"] if os.path.exists(path) else []
logs, wins, best_by = [], [], collections.Counter()
for shape in shapes:
    comps = shape["competitors"]
    ours = comps.get("ours") or {}
    ran = {name: c["kernel_us"] for name, c in comps.items()
           if name.startswith("ours:") and c.get("ok") and c.get("kernel_us")}
    if not (ours.get("ok") and ours.get("kernel_us") and ran):
        continue
    name, us = min(ran.items(), key=lambda item: item[1])
    ratio = ours["kernel_us"] / us
    logs.append(math.log(ratio))
    best_by[name.split("_t", 1)[1]] += 1
    if ratio >= 1.03:
        wins.append((ratio, shape["mnk"], name))
print(f"  f32 {layout}: {len(logs)} shapes timed; best small_k over ours (kernel-only, same run): geomean "
      f"{math.exp(sum(logs) / max(len(logs), 1)):.3f}, >= 3% faster on {len(wins)}; fastest of the three: "
      f"{dict(best_by)}")
for ratio, mnk, name in sorted(wins, reverse=True)[:12]:
    print(f"    {mnk} {ratio:.3f} {name}")
PY
done
pack_out ${CALL:-call}
