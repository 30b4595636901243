"""`python -m tuner.ab A_DIR B_DIR`: two table sets compared with the roles swapped, from two benchmark runs.

Per call, which dispatcher object is `ours` and which is `ours[NAME]` moves time by ~2% either way (docs/notes.md),
so a table comparison runs twice: A with ours = candidate and ours[base] = the base tables, B with ours = base and
ours[cand] = candidate (`scripts/h200_ab.sh`). For each run and timing this prints the geomean of base time /
candidate time over the shapes both passed (> 1: the candidate is faster) with its range; the two roles agreeing
is the evidence, one role alone is not.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from tuner.results import read_json
from tuner.summary import geomean

OURS = "ours"


def ratios(results: dict, timing: str) -> tuple[str, list[float]]:
    """(the other dispatcher's name, base/candidate time per shape). In a run whose `ours` is the base (the other is
    named ours[cand…]) the ratio is ours/other; otherwise other/ours."""
    names = {name for shape in results["shapes"] for name in shape["competitors"]}
    others = sorted(name for name in names if name.startswith(f"{OURS}["))
    if len(others) != 1:
        raise ValueError(f"want exactly one ours[NAME] competitor besides ours, got {others}")
    other = others[0]
    base_is_ours = other.startswith(f"{OURS}[cand")
    out = []
    for shape in results["shapes"]:
        a, b = shape["competitors"].get(OURS), shape["competitors"].get(other)
        if a and b and a.get("ok") and b.get("ok"):
            candidate, base = (b, a) if base_is_ours else (a, b)
            out.append(base[f"{timing}_us"] / candidate[f"{timing}_us"])
    return other, out


def report(run_dirs: list[Path]) -> list[dict]:
    rows = []
    for run_dir in run_dirs:
        path = run_dir / "results.json"
        results = read_json(path if path.exists() else run_dir / "results.json.gz")
        for timing in results["meta"].get("timings", ["kernel", "call"]):
            other, values = ratios(results, timing)
            if values:
                rows.append({"run": run_dir.name, "other": other, "timing": timing, "shapes": len(values),
                             "candidate_faster_by": geomean(values), "min": min(values), "max": max(values)})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path, help="eval_one_file.sh base dirs (results.json[.gz] inside)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = report(args.runs)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| run | other dispatcher | timing | shapes | candidate faster by (geomean base/cand) | range |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['run']} | {r['other']} | {r['timing']} | {r['shapes']} | {r['candidate_faster_by']:.4f}x "
              f"| {r['min']:.3f}–{r['max']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
