"""`python -m tuner.grid_diff OLD.csv NEW.csv [--shapes FILE] [--baseline torch.matmul]`: two grid benchmark runs
(results.csv or results.json of `eval_one_file.sh`, plain or .gz, e.g. before and after a table change) on the shapes
both measured.

For each timing: ours vs the baseline as the geomean speedup and the count below 0.97x, in each run — over all common
shapes, and with --shapes (an M_N_K list: the entries that changed) over those and over the rest. The rest is the
control: a change of the tables shows on the listed shapes while the others stay put; if the others move too, the runs
differ in conditions (host, power), not only in tables. Ratios inside each run are interleaved measurements; absolute
times from different runs are not compared.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict

from tuner.results import read_long_csv
from tuner.summary import FLOOR, geomean
from tuner.timing import TIMINGS

OURS = "ours"


def speedups(path, baseline: str, timing: str) -> dict[str, float]:
    """mnk -> baseline time / our time, for shapes where both passed."""
    times: dict[str, dict[str, float]] = defaultdict(dict)
    for row in read_long_csv(path):
        value = row.get(f"{timing}_us")
        if row["ok"] == "True" and value:
            times[row["mnk"]][row["competitor"]] = float(value)
    return {mnk: t[baseline] / t[OURS] for mnk, t in times.items() if OURS in t and baseline in t}


def diff_rows(old_path, new_path, baseline: str = "torch.matmul", listed: set[str] | None = None) -> list[dict]:
    rows = []
    for timing in TIMINGS:
        old, new = speedups(old_path, baseline, timing), speedups(new_path, baseline, timing)
        common = sorted(set(old) & set(new))
        if not common:
            continue
        groups = [("all", common)]
        if listed is not None:
            groups += [("listed", [s for s in common if s in listed]), ("rest", [s for s in common if s not in listed])]
        for name, shapes in groups:
            if shapes:
                rows.append({"timing": timing, "shapes": name, "n": len(shapes),
                             "old": geomean(old[s] for s in shapes), "new": geomean(new[s] for s in shapes),
                             "old_below": sum(old[s] < FLOOR for s in shapes),
                             "new_below": sum(new[s] < FLOOR for s in shapes)})
    return rows


def format_rows(rows: list[dict], baseline: str) -> str:
    lines = [f"| timing | shapes | n | old: ours vs {baseline} | new | change | below {FLOOR}x old → new |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['timing']} | {r['shapes']} | {r['n']} | {r['old']:.3f}x | {r['new']:.3f}x | "
                     f"{r['new'] / r['old'] - 1:+.1%} | {r['old_below']} → {r['new_below']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", help="results.csv of the earlier run")
    p.add_argument("new", help="results.csv of the later run")
    p.add_argument("--baseline", default="torch.matmul")
    p.add_argument("--shapes", help="M_N_K file: report these shapes and the rest apart (e.g. the changed entries)")
    args = p.parse_args(argv)
    listed = None
    if args.shapes:
        with open(args.shapes) as f:
            listed = {line.strip() for line in f if line.strip()}
    rows = diff_rows(args.old, args.new, args.baseline, listed)
    if not rows:
        print(f"no shape measured by both runs with {OURS} and {args.baseline}", file=sys.stderr)
        return 1
    print(format_rows(rows, args.baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
