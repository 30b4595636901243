"""`python -m tuner.floor_recheck`: is a grid's shape below the 0.97x floor, or inside run-to-run spread?

    python -m tuner.floor_recheck pick --results GRID/results.json.gz --baselines torch.matmul,cuBLAS-tn --out s.txt
    python -m tuner.floor_recheck baselines --results GRID/results.json.gz   # what the grid timed: torch.matmul,...
    python -m tuner.floor_recheck report --results GRID/results.json.gz --rounds R1/results.json R2/... \
        --baselines torch.matmul,cuBLAS-tn [--out DIR]

A grid run times each shape once, in one process, in a fraction of a second; a shape's speedup moves between runs by
a few percent (session 39: torch.matmul on f16 col 1024×512×8192 took 20.6 µs in one run, 19.0 µs in the next), so
a speedup of 0.95x from one run does not say the shape is below the floor. `pick` lists the shapes the grid put below
it against any of the baselines; a device script (scripts/floor_recheck.sh) times them again in fresh processes, each
a "round" with every competitor interleaved as in any eval run; `report` sets the grid's figure beside the rounds'.
A shape is **below** where every round (the grid's own included) puts it below, **above** where the rounds alone
all put it at or above, and **within spread** where they straddle the floor.

`rechecked(grid, rounds)` is the grid as its rounds correct it: each rechecked competitor's figures the median over
the grid and the rounds, so that a correction read from the grid (tuner.gpu_overlays) stands on every run of a
shape, not on the one draw that put it below.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from tuner.competitors import BASELINES as KNOWN_BASELINES
from tuner.results import read_json, speedups
from tuner.summary import FLOOR

BELOW, SPREAD, ABOVE = "below", "within spread", "above"


def speedups_of(results: dict, timing: str, baselines: list[str]) -> dict[tuple[str, str], float]:
    """{(mnk, baseline): ours' speedup} of one results.json, for the baselines it timed."""
    out = {}
    for rec in results["shapes"]:
        for b in baselines:
            v = rec.get("speedup", {}).get(timing, {}).get(b)
            if v:
                out[(rec["mnk"], b)] = v
    return out


def baselines_of(results: dict) -> list[str]:
    """The baselines a run timed, in tuner.competitors' order: a recheck times its grid's shapes against the grid's
    own baselines, read from the grid rather than named again by each script that starts one."""
    timed = {name for rec in results["shapes"] for name in rec.get("competitors", {})}
    return [b for b in KNOWN_BASELINES if b in timed]


def choices_of(results: dict, timing: str) -> dict[str, str | None]:
    """{mnk: what ours ran} for the timing: the graph choice for kernel-only (the eager one where the table has no
    graph choice), the eager one per call."""
    out = {}
    for rec in results["shapes"]:
        info = rec.get("competitors", {}).get("ours", {}).get("info") or {}
        out[rec["mnk"]] = (info.get("graph_kernel") if timing == "kernel" else None) or info.get("kernel")
    return out


def pick(results: list[dict], timing: str, baselines: list[str], floor: float = FLOOR) -> list[str]:
    """Shapes any of the runs put below the floor against any of the baselines, in grid order of first sight."""
    seen: dict[str, None] = {}
    for r in results:
        for (mnk, _), v in speedups_of(r, timing, baselines).items():
            if v < floor:
                seen.setdefault(mnk)
    return list(seen)


def verdict(first: float | None, rounds: list[float], floor: float = FLOOR) -> str:
    """BELOW: the grid and every round below the floor; ABOVE: every round at or above it (the grid that picked the
    shape is one draw of the spread the rounds measure); SPREAD: the rounds straddle it."""
    if not rounds:
        raise ValueError("no round timed this shape")
    if all(v < floor for v in rounds) and (first is None or first < floor):
        return BELOW
    if all(v >= floor for v in rounds):
        return ABOVE
    return SPREAD


def report(first: dict, rounds: list[dict], timing: str, baselines: list[str], floor: float = FLOOR) -> dict:
    """Per (shape, baseline) the grid picked below the floor: the grid's speedup, each round's, their median, min and
    max and the verdict; and the counts per baseline. A pair no round timed (it failed its check or the run was cut
    short) is listed as untimed, never as passed. `other_choice` counts the rounds whose `ours` ran another kernel
    than the grid's: 0 for rounds of the same tables; rounds taken from other sessions' grids may differ."""
    grid = speedups_of(first, timing, baselines)
    per_round = [speedups_of(r, timing, baselines) for r in rounds]
    first_choice = choices_of(first, timing)
    round_choices = [choices_of(r, timing) for r in rounds]
    rows, untimed = [], []
    for (mnk, b), v in sorted(grid.items(), key=lambda kv: (kv[0][1], kv[1])):
        if v >= floor:
            continue
        again = [r[(mnk, b)] for r in per_round if (mnk, b) in r]
        other = sum(1 for r, c in zip(per_round, round_choices)
                    if (mnk, b) in r and c.get(mnk) != first_choice.get(mnk))
        if not again:
            untimed.append({"mnk": mnk, "baseline": b, "grid": v})
            continue
        rows.append({"mnk": mnk, "baseline": b, "grid": v, "rounds": again, "median": statistics.median(again),
                     "min": min(again + [v]), "max": max(again + [v]), "verdict": verdict(v, again, floor),
                     "choice": first_choice.get(mnk), "other_choice": other})
    counts = {b: {k: sum(1 for r in rows if r["baseline"] == b and r["verdict"] == k) for k in (BELOW, SPREAD, ABOVE)}
              for b in baselines}
    for b in baselines:
        counts[b]["untimed"] = sum(1 for u in untimed if u["baseline"] == b)
    return {"timing": timing, "floor": floor, "rounds": len(rounds), "rows": rows, "untimed": untimed,
            "counts": counts}


def rechecked(grid: dict, rounds: list[dict], same_tables: bool = False) -> dict:
    """The grid with, for every shape the rounds timed again, each competitor's kernel-only and per-call figures the
    median over its passing readings in the grid and the rounds (TFLOP/s and speedups recomputed); the rest as it
    was. Rounds of other tables or another card are refused: `ours` must have run what it ran in the grid. Rounds of
    another commit are taken only where the caller compared the tables both ran and found them equal (same_tables:
    session 65's recheck ran at a later commit that changed scripts only)."""
    for r in rounds:
        for key in ("gpu", "acc", "b_layout") + (() if same_tables else ("commit",)):
            if r["meta"].get(key) != grid["meta"].get(key):
                raise ValueError(f"a round of {key} {r['meta'].get(key)!r}, the grid's {grid['meta'].get(key)!r}")
    again: dict[str, list[dict]] = {}
    for r in rounds:
        for rec in r["shapes"]:
            again.setdefault(rec["mnk"], []).append(rec["competitors"])
    shapes = []
    for rec in grid["shapes"]:
        later = again.get(rec["mnk"])
        if not later:
            shapes.append(rec)
            continue
        competitors = {}
        for name, first in rec["competitors"].items():
            readings = [first, *(c[name] for c in later if name in c)]
            if name == "ours" and any(_ran(c) != _ran(first) for c in readings):
                raise ValueError(f"{rec['mnk']}: ours ran another choice in a round than in the grid")
            competitors[name] = _merged(first, readings, rec["flop"])
        shapes.append({**rec, "competitors": competitors,
                       "speedup": {t: speedups(competitors, t) for t in rec.get("speedup", {})}})
    return {**grid, "shapes": shapes}


def _merged(first: dict, readings: list[dict], flop: float) -> dict:
    """A competitor's record with the median of its passing readings, all of one algorithm. cuBLASLt autotuning may
    keep another algorithm in a round than in the grid (session 55: 2048x512x2048 kept index 2 in the grid, index 1,
    3-5% faster, in all three rounds): the median is then over the algorithm kept most often (the faster on a tie),
    and the record names that one, so that a table entry made from it (tuner.confirm) runs what was timed."""
    if not first.get("ok"):
        return dict(first)
    groups: dict[tuple, list[dict]] = {}
    for c in readings:
        if c.get("ok"):
            groups.setdefault(_kept(c), []).append(c)

    def rank(group: list[dict]) -> tuple:
        kernel = [c["kernel_us"] for c in group if c.get("kernel_us")]
        return -len(group), statistics.median(kernel) if kernel else float("inf")
    group = min(groups.values(), key=rank)
    merged = dict(group[0])
    for timing in ("kernel", "call"):
        values = [c[f"{timing}_us"] for c in group if c.get(f"{timing}_us")]
        if values:
            merged[f"{timing}_us"] = statistics.median(values)
            merged[f"{timing}_tflops"] = flop / merged[f"{timing}_us"] / 1e6
    return merged


def _kept(reading: dict) -> tuple:
    """The algorithm a reading ran where the competitor chooses one per run (cuBLASLt autotuning); () otherwise."""
    info = reading.get("info") or {}
    if "algo_index" not in info:
        return ()
    return info["algo_index"], json.dumps(info.get("algo"), sort_keys=True)


def _ran(ours: dict) -> tuple:
    info = ours.get("info") or {}
    return info.get("kernel"), info.get("graph_kernel")


def format_report(rep: dict) -> str:
    lines = [f"## shapes a grid put below {rep['floor']}x, timed again in {rep['rounds']} more runs "
             f"({rep['timing']} timing)", "",
             "| baseline | below in every run | within spread | above in every later run | not timed again |",
             "|---|---|---|---|---|"]
    for b, c in rep["counts"].items():
        lines.append(f"| {b} | {c[BELOW]} | {c[SPREAD]} | {c[ABOVE]} | {c['untimed']} |")
    lines += ["", "| shape | baseline | ours ran | grid | rounds | median | verdict | rounds with another choice |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        rounds = " ".join(f"{v:.3f}" for v in r["rounds"])
        lines.append(f"| {r['mnk']} | {r['baseline']} | {r['choice']} | {r['grid']:.3f} | {rounds} | "
                     f"{r['median']:.3f} | {r['verdict']} | {r['other_choice']} |")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tuner.floor_recheck", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("pick", "report"):
        s = sub.add_parser(name)
        s.add_argument("--results", nargs="+", required=True, help="the grid run(s): results.json(.gz)")
        s.add_argument("--baselines", default="torch.matmul", help="comma-separated baseline names")
        s.add_argument("--timing", default="kernel", choices=("kernel", "call"))
        s.add_argument("--floor", type=float, default=FLOOR)
        s.add_argument("--out", help="pick: the shapes file (M_N_K lines); report: a folder for report.md/.json")
    sub.choices["report"].add_argument("--rounds", nargs="+", required=True, help="the rounds' results.json(.gz)")
    sub.add_parser("baselines", help="print the baselines the run timed, comma-separated").add_argument(
        "--results", required=True, help="a grid run: results.json(.gz)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.cmd == "baselines":
        names = baselines_of(read_json(args.results))
        if not names:
            sys.exit(f"{args.results}: no baseline timed")
        print(",".join(names))
        return 0
    baselines = [b for b in args.baselines.split(",") if b]
    if args.cmd == "pick":
        shapes = pick([read_json(p) for p in args.results], args.timing, baselines, args.floor)
        text = "".join(s + "\n" for s in shapes)
        if args.out:
            Path(args.out).write_text(text)
        print(f"{len(shapes)} shapes below {args.floor}x", file=sys.stderr)
        sys.stdout.write("" if args.out else text)
        return 0
    if len(args.results) != 1:
        sys.exit("report: one grid run (--results) per report")
    rep = report(read_json(args.results[0]), [read_json(p) for p in args.rounds], args.timing, baselines,
                 args.floor)
    text = format_report(rep)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(text)
        (out / "report.json").write_text(json.dumps(rep, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
