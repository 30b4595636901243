"""Session 32: the per-shape verdicts of session 31's A/Bs (benchmarks/h200-2026-12-04-s31/callN), split by the family
of the candidate's graph choice, and for the splitk twins by what their whole grid prefetches (the rule that went into
tuner/prefetch_twins.py). A shape's ratio is the geomean of both roles' committed/candidate kernel time.

    python benchmarks/h200-2026-12-05-s32/ab_by_family.py AB_DIR CAND_DIR LAYOUT
    # e.g. /tmp/ab1 (call1/ab_col/ab.tar.gz unpacked) .carry4/candS31 col  (make_s31_cand.py makes the candidate)
"""
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from kernels.config import KernelConfig
from tuner.prefetch_twins import prefetch_footprint, prefetch_pays


def kernel_us(run: Path) -> dict:
    out = defaultdict(dict)
    for row in csv.DictReader(open(run / "results.csv")):
        out[row["mnk"]][row["competitor"]] = float(row["kernel_us"])
    return out


def geomean(values) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def main(ab_dir: Path, cand_dir: Path, layout: str) -> None:
    for acc, run in (("f32", "fp32"), ("f16", "fp16")):
        a, b = kernel_us(ab_dir / f"{run}_A"), kernel_us(ab_dir / f"{run}_B")
        entries = {f'{e["m"]}_{e["n"]}_{e["k"]}': e for e in json.load(open(cand_dir / f"sm90_{acc}.json"))["entries"]
                   if e["b_layout"] == layout}
        by_family, splitk = defaultdict(list), []
        for mnk in sorted(a.keys() & b.keys()):  # a run cut by its deadline times fewer shapes
            ratio = math.sqrt(a[mnk]["ours[committed]"] / a[mnk]["ours"] * b[mnk]["ours"] / b[mnk]["ours[cand]"])
            entry = entries[mnk]
            graph = entry.get("graph") or entry
            cfg, splits = KernelConfig.from_dict(graph["config"]), graph.get("runtime", {}).get("splits", 0)
            by_family[cfg.family].append(ratio)
            if cfg.family == "splitk":
                shape = entry["m"], entry["n"], entry["k"], splits
                ctas, per_cta = prefetch_footprint(cfg, *shape)
                splitk.append((ctas * per_cta / 2**20, ratio, prefetch_pays(cfg, *shape)))
        for family, ratios in sorted(by_family.items()):
            print(f"{acc} {layout} {family}: {len(ratios)} shapes, geomean {geomean(ratios):.4f}, "
                  f"range {min(ratios):.3f}-{max(ratios):.3f}, below 0.98x {sum(r < 0.98 for r in ratios)}")
        for label, keep in (("rule moves", True), ("rule leaves", False)):
            ratios = [r for _, r, pays in splitk if pays is keep]
            if ratios:
                print(f"  splitk, {label}: {len(ratios)} shapes, geomean {geomean(ratios):.4f}, "
                      f"range {min(ratios):.3f}-{max(ratios):.3f}")
        for mib in sorted({round(m) for m, _, _ in splitk}):
            ratios = [r for m, r, _ in splitk if round(m) == mib]
            print(f"  splitk, ~{mib} MiB prefetched by the grid: {len(ratios)} shapes, {min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
