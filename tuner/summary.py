"""`python -m tuner.summary`: a grid run -> geomean speedup by size bucket, for every baseline and timing; the worst
shapes; how close ours and torch.matmul came to the GPU's roofline (tuner/roofline.py); PNG plots (speedup
distribution by bucket; TFLOP/s vs FLOP; TFLOP/s vs arithmetic intensity under the roofline).

  python -m tuner.summary --results results/results.csv --out results/summary
  python -m tuner.summary --speedup_csv ../shared/anchors/cudal2_published_h100_offline.csv --timing kernel --out s/
  python -m tuner.summary --results r/results.json --published ../shared/anchors/cudal2_published_h100_server.csv
The second form reads a wide CSV of speedups (CUDA-L2's published format: mnk + one column per baseline). The third
sets such published speedups beside the run's own, over the shapes both have, per baseline and size bucket (CUDA-L2
publishes per-call figures: `--published_timing call`, the default).
With --results, the run's own results.json (or results.json.gz) next to the CSV says where and how it was measured;
the summary repeats that (date, GPU, driver, CUDA, torch, commit, settings) so a copied summary keeps its context."""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from tuner.results import graph_timed, read_json, read_long_csv
from tuner.shapes import BUCKETS, bucket_of, parse_mnk
from tuner.timing import TIMINGS

ALL = "all"
FLOOR = 0.97  # issue 4's goal: no shape below this speedup


def geomean(values) -> float:
    values = list(values)
    if not values:
        return float("nan")
    if any(v <= 0 for v in values):
        raise ValueError("geomean needs positive values")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def speedup_rows_from_long(rows: list[dict]) -> list[dict]:
    """results.csv rows -> {mnk, flop, timing, baseline, speedup} for every baseline with a speedup."""
    out = []
    for r in rows:
        if r["competitor"] == "ours" or r["competitor"].startswith("ours:"):
            continue
        for t in TIMINGS:
            v = r.get(f"speedup_{t}")
            if v not in (None, ""):
                out.append({"mnk": r["mnk"], "flop": float(r["flop"]), "timing": t, "baseline": r["competitor"],
                            "speedup": float(v)})
    return out + max_rows(out)


def max_rows(rows: list[dict]) -> list[dict]:
    """CUDA-L2's '-max' baselines per shape and timing: the smaller speedup of each TN/NN pair."""
    from tuner.competitors import MAX_OF

    index = {(r["mnk"], r["timing"], r["baseline"]): r for r in rows}
    out = []
    for (mnk, timing) in {(r["mnk"], r["timing"]) for r in rows}:
        for name, pair in MAX_OF.items():
            present = [index[(mnk, timing, p)] for p in pair if (mnk, timing, p) in index]
            if present and (mnk, timing, name) not in index:
                low = min(present, key=lambda r: r["speedup"])
                out.append(dict(low, baseline=name))
    return sorted(out, key=lambda r: (r["mnk"], r["timing"], r["baseline"]))


def speedup_rows_from_wide(path: str | Path, timing: str) -> list[dict]:
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            flop = parse_mnk(r["mnk"]).flop
            for name, v in r.items():
                if name != "mnk" and v not in (None, ""):
                    out.append({"mnk": r["mnk"], "flop": flop, "timing": timing, "baseline": name,
                                "speedup": float(v)})
    return out


def by_bucket(rows: list[dict]) -> dict:
    """{timing: {baseline: {bucket|'all': {"geomean", "n"}}}}"""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["timing"], r["baseline"], bucket_of(r["flop"]))].append(r["speedup"])
        groups[(r["timing"], r["baseline"], ALL)].append(r["speedup"])
    out: dict = defaultdict(lambda: defaultdict(dict))
    for (t, b, bucket), values in groups.items():
        out[t][b][bucket] = {"geomean": geomean(values), "n": len(values), "min": min(values),
                             "below_floor": sum(1 for v in values if v < FLOOR)}
    return {t: dict(v) for t, v in out.items()}


def worst(rows: list[dict], timing: str, baseline: str, n: int = 10) -> list[dict]:
    chosen = [r for r in rows if r["timing"] == timing and r["baseline"] == baseline]
    return sorted(chosen, key=lambda r: r["speedup"])[:n]


def bucket_table(title: str, per_baseline: dict, cell) -> list[str]:
    """A markdown table, one row per baseline, one column per size bucket and 'all'; `cell` formats one bucket's
    figures, '-' where a baseline has none."""
    names = [name for name, _, _ in BUCKETS] + [ALL]
    lines = [title, "| baseline | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for b, cells in per_baseline.items():
        lines.append(f"| {b} | " + " | ".join(cell(cells[x]) if x in cells else "-" for x in names) + " |")
    return lines + [""]


def format_summary(table: dict) -> str:
    lines = []
    for t, per_baseline in table.items():
        lines += bucket_table(f"## geomean speedup of ours, {t} timing", per_baseline,
                              lambda c: f"{c['geomean']:.3f}x (n={c['n']})")
        lines += bucket_table(f"## shapes where ours is below {FLOOR}x, {t} timing", per_baseline,
                              lambda c: f"{c['below_floor']} of {c['n']}")
    return "\n".join(lines)


def published_comparison(rows: list[dict], path: str | Path, timing: str = "call") -> dict:
    """{baseline: {bucket|'all': {"ours", "published", "n"}}}: geomean speedups over the shapes that both the run's
    rows (at `timing`) and the wide CSV at `path` have a figure for, per baseline column both name."""
    from tuner.competitors import MAX_OF

    published = {(r["mnk"], r["baseline"]): r["speedup"] for r in speedup_rows_from_wide(path, timing)}
    ran = {(r["mnk"], r["baseline"]) for r in rows if r["timing"] == timing}
    groups = defaultdict(lambda: ([], []))
    for r in rows:
        theirs = published.get((r["mnk"], r["baseline"]))
        if r["timing"] != timing or theirs is None:
            continue
        if any((r["mnk"], member) not in ran for member in MAX_OF.get(r["baseline"], ())):
            continue  # a '-max' of one form only is not the published stronger-of-both
        for key in ((r["baseline"], bucket_of(r["flop"])), (r["baseline"], ALL)):
            groups[key][0].append(r["speedup"])
            groups[key][1].append(theirs)
    out: dict = defaultdict(dict)
    for (baseline, bucket), (ours, theirs) in groups.items():
        out[baseline][bucket] = {"ours": geomean(ours), "published": geomean(theirs), "n": len(ours)}
    return dict(out)


def format_published(comparison: dict, source: str, timing: str) -> str:
    title = f"## ours / published ({source}), {timing} timing, geomean over the shapes both have"
    return "\n".join(bucket_table(title, comparison,
                                  lambda c: f"{c['ours']:.3f}x / {c['published']:.3f}x (n={c['n']})")).rstrip()


MEASURED = ("date", "gpu", "driver", "cuda", "torch", "commit", "host", "host_cpu", "host_cpus", "host_probe_us",
            "acc", "b_layout", "mode", "timings", "warmup_seconds", "benchmark_seconds", "call_burst")


def _results_json(results_csv: str | Path) -> dict:
    """The results.json(.gz) beside an eval run's CSV ({} if none)."""
    folder = Path(results_csv).parent
    for name in ("results.json", "results.json.gz"):
        if (folder / name).exists():
            return read_json(folder / name)
    return {}


def run_meta(results: dict) -> dict:
    """The measurement context of an eval run: the measured fields of its results.json's `meta`."""
    meta = results.get("meta", {})
    return {key: meta[key] for key in MEASURED if meta.get(key) is not None}


def event_timed(results: dict) -> dict[str, list[str]]:
    """{competitor: [M_N_K, ...]} of kernel-only figures taken from eager launches timed with events, not a CUDA graph
    replay: a competitor whose capture failed (tuner.timing.GraphSampler). Beside graph-timed competitors such a
    figure carries launch gaps the others do not (session 25: 4-6% of `ours` beside cuBLASLt autotuning, up to 0.81x
    on a shape that measured 1.00x by graphs), so a summary names them."""
    found: dict[str, list[str]] = defaultdict(list)
    for shape in results.get("shapes", []):
        for name, record in shape.get("competitors", {}).items():
            if not graph_timed(record):
                found[name].append(shape["mnk"])
    return dict(found)


def call_by_before(results: dict) -> dict:
    """{before: {baseline: {bucket|'all': {"geomean", "n"}}}}: per-call speedups of ours from the samples that followed
    a graph replay ("kernel": a cold host path) and those that followed a call ("call": a warm one), each competitor's
    medians of that kind (`info.call_us_after`, runs timing both since session 36); {} for runs without them."""
    groups = defaultdict(list)
    for shape in results.get("shapes", []):
        comps = shape.get("competitors", {})
        mine = (comps.get("ours", {}).get("info") or {}).get("call_us_after") or {}
        flop = parse_mnk(shape["mnk"]).flop
        for name, record in comps.items():
            theirs = (record.get("info") or {}).get("call_us_after") or {}
            if name == "ours" or name.startswith("ours:") or not record.get("ok"):
                continue
            for before, us in theirs.items():
                if us and mine.get(before):
                    for bucket in (bucket_of(flop), ALL):
                        groups[(before, name, bucket)].append(us / mine[before])
    out: dict = defaultdict(lambda: defaultdict(dict))
    for (before, name, bucket), values in groups.items():
        out[before][name][bucket] = {"geomean": geomean(values), "n": len(values)}
    return {before: dict(v) for before, v in out.items()}


def format_call_by_before(found: dict) -> str:
    what = {"kernel": "after a graph replay (cold host path)", "call": "after another call (warm host path)"}
    lines = []
    for before, per_baseline in found.items():
        lines += bucket_table(f"## geomean speedup of ours per call, samples {what.get(before, before)}",
                              per_baseline, lambda c: f"{c['geomean']:.3f}x (n={c['n']})")
    return "\n".join(lines).rstrip()


def format_event_timed(found: dict[str, list[str]], shown: int = 8) -> str:
    if not found:
        return ""
    lines = ["## kernel timing by events (the capture failed; not comparable with graph replays)"]
    for name, shapes in found.items():
        more = f", ... ({len(shapes) - shown} more)" if len(shapes) > shown else ""
        lines.append(f"{name}: {len(shapes)} shapes: " + ", ".join(shapes[:shown]) + more)
    return "\n".join(lines) + "\n"


# the baseline that is the very call dispatch's "cublas" arm makes, by B's layout: cublasGemmEx in B's form
OWN_CALL = {"col": "cuBLAS-tn", "row": "cuBLAS-nn"}


def below_floor_own_call(results: dict, floor: float = FLOOR) -> dict[str, dict[str, list[str]]]:
    """{"kernel": {baseline: [M_N_K, ...]}}: shapes below the floor, kernel-only, against a cuBLAS baseline where
    ours' graph choice was that very call (the "cublas" arm, cublasGemmEx in B's form, with the baseline's
    accumulator). Such a speedup is two timings of one kernel, run-to-run spread rather than a loss (session 46:
    512×4096×4096 at 0.961x of cuBLAS TN), which `tuner.floor_recheck` confirms by timing again. Per call is left
    out: there ours adds its dispatch to the same kernel, a real cost. A '-max' baseline counts where its figure is
    the B-form one's. Runs before session 47 do not record ours' accumulator: an f16 run's cuBLAS choice there may
    have accumulated in fp32 (another call), so those are not counted."""
    from tuner.competitors import MAX_OF

    meta, found = results.get("meta", {}), defaultdict(list)
    for shape in results.get("shapes", []):
        info = (shape.get("competitors", {}).get("ours") or {}).get("info") or {}
        own = OWN_CALL.get(info.get("b_layout") or meta.get("b_layout"))
        per_baseline = (shape.get("speedup") or {}).get("kernel") or {}
        ran_acc = info.get("graph_run_acc") or ("f32" if meta.get("acc") == "f32" else None)
        kernel = info.get("graph_kernel") or info.get("kernel")
        if own not in per_baseline or kernel != "cublas" or ran_acc != meta.get("acc"):
            continue
        for name, value in per_baseline.items():   # own itself, or a '-max' of a pair holding it whose figure it is
            if value < floor and own in MAX_OF.get(name, (name,)) and value == per_baseline[own]:
                found[name].append(shape["mnk"])
    return {"kernel": dict(found)} if found else {}


def format_own_call(found: dict, table: dict, shown: int = 8) -> str:
    if not found:
        return ""
    lines = [f"## below {FLOOR}x kernel-only where ours' graph choice is that baseline's own call (cuBLAS GemmEx in "
             f"B's form, same accumulator): two timings of one kernel, spread rather than a loss"]
    for t, per_baseline in found.items():
        for name, shapes in per_baseline.items():
            of = table.get(t, {}).get(name, {}).get(ALL, {}).get("below_floor", len(shapes))
            more = f", ... ({len(shapes) - shown} more)" if len(shapes) > shown else ""
            lines.append(f"{t}, {name}: {len(shapes)} of the {of} below: " + ", ".join(shapes[:shown]) + more)
    return "\n".join(lines)


def _save(plt, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot(rows: list[dict], tflops_rows: list[dict], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    timings = sorted({r["timing"] for r in rows})
    baselines = sorted({r["baseline"] for r in rows})
    if timings:
        fig, axes = plt.subplots(1, len(timings), figsize=(7 * len(timings), 5), squeeze=False)
        bucket_names = [name for name, _, _ in BUCKETS]
        for ax, t in zip(axes[0], timings):
            width = 0.8 / max(1, len(baselines))
            for j, b in enumerate(baselines):
                data = [[r["speedup"] for r in rows if r["timing"] == t and r["baseline"] == b
                         and bucket_of(r["flop"]) == name] for name in bucket_names]
                pos = [i + (j - (len(baselines) - 1) / 2) * width for i in range(len(bucket_names))]
                keep = [(p, d) for p, d in zip(pos, data) if d]
                if keep:
                    bp = ax.boxplot([d for _, d in keep], positions=[p for p, _ in keep], widths=width * 0.9,
                                    patch_artist=True, showfliers=False)
                    for box in bp["boxes"]:
                        box.set_facecolor(plt.cm.tab10(j % 10))
                    ax.plot([], [], color=plt.cm.tab10(j % 10), lw=6, label=b)
            ax.axhline(1.0, color="k", lw=0.8, ls="--")
            ax.set_xticks(range(len(bucket_names)), [f"FLOP {n}" for n in bucket_names])
            ax.set_ylabel("speedup of ours (x)")
            ax.set_title(f"speedup by size bucket, {t} timing")
            ax.legend(fontsize=7)
        written.append(_save(plt, fig, out_dir / "speedup_by_bucket.png"))
    if tflops_rows:
        fig, axes = plt.subplots(1, len(TIMINGS), figsize=(7 * len(TIMINGS), 5), squeeze=False)
        for ax, t in zip(axes[0], TIMINGS):
            for j, name in enumerate(sorted({r["competitor"] for r in tflops_rows})):
                pts = [(float(r["flop"]), float(r[f"{t}_tflops"])) for r in tflops_rows
                       if r["competitor"] == name and r.get(f"{t}_tflops") not in (None, "")]
                if pts:
                    ax.scatter(*zip(*pts), s=8, label=name, color=plt.cm.tab10(j % 10),
                               marker="*" if name == "ours" else "o")
            ax.set_xscale("log")
            ax.set_xlabel("FLOP (2MNK)")
            ax.set_ylabel("TFLOP/s")
            ax.set_title(f"TFLOP/s vs FLOP, {t} timing")
            if ax.get_legend_handles_labels()[0]:  # a timing the rows do not have stays an empty panel
                ax.legend(fontsize=7)
        written.append(_save(plt, fig, out_dir / "tflops_vs_flop.png"))
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tuner.summary", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", help="results.csv (or results.json) of an eval grid run, plain or .gz")
    src.add_argument("--speedup_csv", help="wide CSV of speedups (CUDA-L2's format)")
    p.add_argument("--timing", choices=TIMINGS, default="kernel", help="timing of --speedup_csv")
    p.add_argument("--out", required=True, help="directory for summary.json, summary.md and the PNGs")
    p.add_argument("--published", metavar="CSV",
                   help="with --results: a wide CSV of published speedups (CUDA-L2's) to set beside the run's own")
    p.add_argument("--published_timing", choices=TIMINGS, default="call",
                   help="the timing the --published figures were measured with (CUDA-L2's: per call)")
    p.add_argument("--worst", type=int, default=10)
    p.add_argument("--peak_tflops", type=float, default=None,
                   help="dense fp16 peak for the roofline (default: the datasheet's, by the run's GPU name)")
    p.add_argument("--peak_tbps", type=float, default=None, help="HBM bandwidth for the roofline, TB/s (same)")
    p.add_argument("--no_plots", action="store_true")
    args = p.parse_args(argv)
    if args.published and not args.results:
        p.error("--published needs --results (a run to set beside it)")
    from tuner import roofline  # it builds on this module's geomean

    long_rows = read_long_csv(args.results) if args.results else []
    rows = speedup_rows_from_long(long_rows) if args.results else speedup_rows_from_wide(args.speedup_csv, args.timing)
    if not rows:
        print("no speedups found (was 'ours' timed?)", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = by_bucket(rows)
    worst_shapes = {t: {b: worst(rows, t, b, args.worst) for b in per_b} for t, per_b in table.items()}
    source = args.results or args.speedup_csv
    results = _results_json(args.results) if args.results else {}
    meta, events, by_before = run_meta(results), event_timed(results), call_by_before(results)
    own_call = below_floor_own_call(results)
    roof = _roofline(meta.get("gpu"), args.peak_tflops, args.peak_tbps) if long_rows else None
    roof_rows = roofline.shares(long_rows, roof) if roof else []
    roof_summary = roofline.summarize(roof_rows) if roof_rows else None
    versus = published_comparison(rows, args.published, args.published_timing) if args.published else None
    (out / "summary.json").write_text(json.dumps({"source": source, "meta": meta, "by_bucket": table,
                                                  "worst": worst_shapes, "below_floor_own_call": own_call,
                                                  "event_timed": events,
                                                  "call_by_before": by_before,
                                                  "roofline": roof_summary and {"peaks": roof.describe(),
                                                                                **roof_summary},
                                                  "published": versus and {"source": args.published,
                                                                           "timing": args.published_timing,
                                                                           "by_baseline": versus}}, indent=1))
    text = format_summary(table)
    for t, per_b in worst_shapes.items():
        for b, ws in per_b.items():
            text += f"\nworst vs {b} ({t}): " + ", ".join(f"{w['mnk']} {w['speedup']:.3f}x" for w in ws[:5])
    if own_call:
        text += "\n\n" + format_own_call(own_call, table)
    if by_before:
        text += "\n\n" + format_call_by_before(by_before)
    if versus is not None:
        text += "\n\n" + format_published(versus, args.published, args.published_timing)
    if roof_summary:
        text += "\n\n" + roofline.format_summary(roof_summary, roof)
    if events:
        text += "\n\n" + format_event_timed(events)
    measured = "".join(f"{key}: {value}\n" for key, value in meta.items())
    (out / "summary.md").write_text(f"source: {source}\n{measured}\n{text}\n")
    print(text)
    if not args.no_plots:
        written = plot(rows, long_rows, out)
        if roof_rows:
            roofline.plot(roof_rows, roof, out / "roofline.png", f"kernel-only TFLOP/s under the roofline, "
                                                                 f"{meta.get('gpu', '')} {meta.get('acc', '')}")
            written.append(out / "roofline.png")
        for path in written:
            print(f"wrote {path}")
    return 0


def _roofline(gpu: str | None, peak_tflops: float | None, peak_tbps: float | None):
    """The datasheet roofline of the run's GPU, with either peak overridden; None when neither is known."""
    from tuner import roofline

    known = roofline.for_gpu(gpu)
    if known is None and (peak_tflops is None or peak_tbps is None):
        return None
    return roofline.Roofline(peak_tflops * 1e12 if peak_tflops else known.flops,
                             peak_tbps * 1e12 if peak_tbps else known.bytes_per_s)


if __name__ == "__main__":
    sys.exit(main())
