"""`python -m tuner.grid_report`: what a tuned table buys over the whole grid, from the tuner's own measurements.

    python -m tuner.grid_report --table kernels/tables/sm90_f32.json --grid tuner/grids/grid_1000.txt --out DIR

Every table entry carries the kernel-only time of its choice and of the tuner's cuBLAS reference (the faster of
cublasGemmEx and cuBLASLt's heuristic top-1 in the same layout), both timed on the same operands in the same CUDA-graph
replay. This turns them into a per-shape CSV, geomean speedup by size bucket, the kernel mix, the coverage of the grid
and the plots. It is not the benchmark (eval_one_file.sh times every baseline, torch.matmul and cuBLASLt autotuning
included, with two timings): it is the grid-wide view the benchmark is too slow to give on every shape.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from kernels.config import FAMILIES
from tuner.shapes import BUCKETS, bucket_of, read_grid
from tuner.summary import ALL, by_bucket, format_summary, plot, worst

TIMING = "kernel (tuner)"
BASELINE = "cuBLAS (min of GemmEx, cuBLASLt top-1)"


def family(kernel: str) -> str:
    """A table entry's family: a built variant's (the name's first part: sm90, sm80, splitk), else the arm itself
    (cublas, cublaslt)."""
    head = kernel.split("_", 1)[0]
    return head if head in FAMILIES else kernel


def grid_rows(table: dict, grid: list | None = None) -> tuple[list[dict], list[str]]:
    """One row per table entry (restricted to the grid when given) and the grid shapes the table lacks."""
    entries = {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in table["entries"]}
    layouts = sorted({key[3] for key in entries}) or ["col"]
    wanted = [(s.m, s.n, s.k, layout) for s in grid for layout in layouts] if grid else sorted(entries)
    rows, missing = [], []
    for m, n, k, layout in wanted:
        e = entries.get((m, n, k, layout))
        if e is None or not e.get("us") or not e.get("cublas_us"):
            missing.append(f"{m}_{n}_{k}/{layout}")
            continue
        flop = 2 * m * n * k
        rows.append({"mnk": f"{m}_{n}_{k}", "b_layout": layout, "flop": flop, "bucket": bucket_of(flop),
                     "kernel": e["kernel"], "family": family(e["kernel"]), "us": e["us"],
                     "cublas_us": e["cublas_us"], "speedup": e["cublas_us"] / e["us"],
                     "tflops": flop / e["us"] / 1e6, "cublas_tflops": flop / e["cublas_us"] / 1e6})
    return rows, missing


def kernel_mix(rows: list[dict]) -> dict:
    """{bucket|'all': {family: count}}"""
    mix: dict = defaultdict(Counter)
    for r in rows:
        mix[r["bucket"]][r["family"]] += 1
        mix[ALL][r["family"]] += 1
    return {bucket: dict(counts) for bucket, counts in mix.items()}


def speedup_rows(rows: list[dict]) -> list[dict]:
    """The rows in tuner.summary's long form (one speedup per shape against the tuner's reference)."""
    return [{"mnk": r["mnk"], "flop": r["flop"], "timing": TIMING, "baseline": BASELINE, "speedup": r["speedup"]}
            for r in rows]


def report(table: dict, rows: list[dict], missing: list[str]) -> str:
    meta = table.get("meta", {})
    speedups = speedup_rows(rows)
    lines = [f"# Tuned table over the grid: {meta.get('gpu', '?')} {meta.get('arch', '')}, acc {meta.get('acc', '?')}",
             "",
             f"Table tuned {meta.get('date', '?')} (commit {meta.get('commit', '?')}; driver {meta.get('driver', '?')}, "
             f"CUDA {meta.get('cuda', '?')}, torch {meta.get('torch', '?')}). Kernel-only times from the tuner "
             "(CUDA-graph replay, operands rotated), reference = the faster of cublasGemmEx and cuBLASLt's top-1. "
             f"{len(rows)} shapes reported, {len(missing)} grid shapes without an entry.", ""]
    lines.append(format_summary(by_bucket(speedups)))
    names = [name for name, _, _ in BUCKETS] + [ALL]
    mix = kernel_mix(rows)
    families = sorted({f for counts in mix.values() for f in counts})
    lines += ["## what the table runs (shapes per family)", "| family | " + " | ".join(names) + " |",
              "|---|" + "---|" * len(names)]
    for f in families:
        lines.append(f"| {f} | " + " | ".join(str(mix.get(b, {}).get(f, 0)) for b in names) + " |")
    lines += ["", "## slowest choices relative to the reference",
              ", ".join(f"{r['mnk']} {r['speedup']:.3f}x" for r in worst(speedups, TIMING, BASELINE, 8))]
    best = sorted(rows, key=lambda r: -r["speedup"])[:8]
    lines += ["", "## largest speedups", ", ".join(f"{r['mnk']} {r['speedup']:.3f}x ({r['family']})" for r in best)]
    if missing:
        lines += ["", f"## missing ({len(missing)})", ", ".join(missing[:40]) + (" ..." if len(missing) > 40 else "")]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", action="append", required=True, help="a tuned table JSON (repeatable)")
    p.add_argument("--grid", default=None, help="file of M_N_K lines (default: every entry of the table)")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    grid = read_grid(args.grid) if args.grid else None
    for path in args.table:
        table = json.loads(Path(path).read_text())
        acc = table.get("meta", {}).get("acc", Path(path).stem)
        rows, missing = grid_rows(table, grid)
        with open(out / f"grid_{acc}.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["mnk"])
            writer.writeheader()
            writer.writerows(rows)
        text = report(table, rows, missing)
        (out / f"grid_{acc}.md").write_text(text)
        figures = out / f"plots_{acc}"
        figures.mkdir(exist_ok=True)
        tflops = [{"competitor": name, "flop": r["flop"], "kernel_tflops": r[column], "call_tflops": None}
                  for r in rows for name, column in (("ours", "tflops"), ("cuBLAS", "cublas_tflops"))]
        plot(speedup_rows(rows), tflops, figures)
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
