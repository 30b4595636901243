"""A device script's one-line-per-competitor progress: the geomean kernel-only speedup over torch.matmul of every
competitor of an eval run (results.json), over the shapes where both passed their checks.
    python3 scripts/geomean_over_torch.py $OUT/<run>/results.json >> $OUT/rc.txt"""
import json
import math
import sys

results = json.load(open(sys.argv[1]))
shapes = results["shapes"]
for name in sorted({k for s in shapes for k in s["competitors"]}):
    r = [s["competitors"]["torch.matmul"]["kernel_us"] / s["competitors"][name]["kernel_us"] for s in shapes
         if s["competitors"].get(name, {}).get("ok") and s["competitors"]["torch.matmul"].get("ok")]
    gm = math.exp(sum(map(math.log, r)) / len(r)) if r else float("nan")
    print(f"  {name}: {gm:.4f}x over torch.matmul on {len(r)} shapes")
