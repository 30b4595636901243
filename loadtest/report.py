"""Saturation report of a ramp run: `python -m loadtest.report --csv-prefix out/binary`.

Reads `<prefix>_steps.csv` (per-step numbers: Locust's final statistics of the requests named after each step's
measurement window, merged across workers; see loadtest/_ramp.py) and Locust's `<prefix>_stats_history.csv`, and
writes `<prefix>_report.md`, `<prefix>_report.json` and `<prefix>_report.png`.

A step meets the SLO when achieved QPS >= 95% of target, P99 < 50 ms and no request failed. The saturation point is
the highest step that meets it. Exit status: 0 the SLO held up to --require-qps (default: the ramp's last target);
1 it did not; 3 inconclusive (the first step that missed was limited by the load generator, not the service);
2 bad input.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

# Locust imports every .py file in loadtest/: only the standard library at module level here.

EXIT_HELD, EXIT_MISSED, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3
GENERATOR_CPU_LIMIT = 90.0   # Locust's own warning threshold


@dataclass
class StepResult:
    step: int
    target_qps: float
    users: int
    achieved_qps: float
    achieved_ratio: float
    history_qps: float       # the same from Locust's stats_history (integer-second timestamps: a cross-check)
    p50_ms: float
    p95_ms: float
    p99_ms: float
    requests: int
    failures: int
    generator_cpu_percent: float
    bottleneck: str          # "", "generator cpu" or "users" (closed loop: latency >= 1/user_rate)
    meets_slo: bool


@dataclass
class Report:
    steps: list[StepResult]
    saturation_qps: float | None      # target of the highest step meeting the SLO
    saturation_achieved_qps: float | None
    first_miss_qps: float | None      # target of the first step missing it
    require_qps: float
    verdict: str                      # held | missed | inconclusive
    slo_p99_ms: float
    min_ratio: float


def read_history(path: str) -> list[tuple[int, int]]:
    """(timestamp, total request count) of the Aggregated rows."""
    rows = []
    with open(path, newline="") as handle:
        for raw in csv.DictReader(handle):
            if raw.get("Name") == "Aggregated":
                rows.append((int(raw["Timestamp"]), int(raw["Total Request Count"])))
    return rows


def history_qps(history: list[tuple[int, int]], start: float, end: float) -> float:
    inside = [(t, n) for t, n in history if start <= t <= end]
    if len(inside) < 2 or inside[-1][0] == inside[0][0]:
        return math.nan
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def evaluate_step(row, history, slo_p99_ms: float, min_ratio: float) -> StepResult:
    seconds = row.measure_end - row.measure_start
    achieved = row.requests / seconds if seconds > 0 else 0.0
    ratio = achieved / row.target_qps if row.target_qps > 0 else 0.0
    bottleneck = ""
    if row.generator_cpu_percent >= GENERATOR_CPU_LIMIT:
        bottleneck = "generator cpu"
    elif row.requests and row.avg_ms >= 1000.0 / row.user_rate:
        bottleneck = "users"
    meets = bool(row.requests) and ratio >= min_ratio and row.p99_ms < slo_p99_ms and row.failures == 0
    return StepResult(row.step, row.target_qps, row.users, achieved, ratio,
                      history_qps(history, row.measure_start, row.measure_end), row.p50_ms, row.p95_ms, row.p99_ms,
                      row.requests, row.failures, row.generator_cpu_percent, bottleneck, meets)


def build_report(steps, history, slo_p99_ms: float = 50.0, min_ratio: float = 0.95,
                 require_qps: float | None = None) -> Report:
    if not steps:
        raise ValueError("no completed steps")
    results = [evaluate_step(row, history, slo_p99_ms, min_ratio) for row in steps]
    passing = [r for r in results if r.meets_slo]
    saturation = max(passing, key=lambda r: r.target_qps) if passing else None
    missing = [r for r in results if not r.meets_slo]
    first_miss = min(missing, key=lambda r: r.target_qps) if missing else None
    required = require_qps if require_qps is not None else max(r.target_qps for r in results)
    if saturation is not None and saturation.target_qps >= required:
        verdict = "held"
    elif first_miss is not None and first_miss.bottleneck == "generator cpu":
        verdict = "inconclusive"
    else:
        verdict = "missed"
    return Report(results, saturation.target_qps if saturation else None,
                  saturation.achieved_qps if saturation else None, first_miss.target_qps if first_miss else None,
                  required, verdict, slo_p99_ms, min_ratio)


def _ms(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.0f}"


def render_markdown(report: Report, title: str) -> str:
    lines = [f"# {title}", "",
             f"Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}. A step meets the SLO when "
             f"achieved >= {report.min_ratio:.0%} of target, P99 < {report.slo_p99_ms:g} ms and no failures.", "",
             "| target QPS | users | achieved QPS | achieved/target | history QPS | P50 ms | P95 ms | P99 ms | requests "
             "| failures | generator CPU % | limited by | SLO |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in report.steps:
        lines.append(f"| {r.target_qps:g} | {r.users} | {r.achieved_qps:.1f} | {r.achieved_ratio:.1%} | "
                     f"{r.history_qps:.1f} | {_ms(r.p50_ms)} | {_ms(r.p95_ms)} | {_ms(r.p99_ms)} | {r.requests} | "
                     f"{r.failures} | {r.generator_cpu_percent:.0f} | {r.bottleneck or '-'} | "
                     f"{'ok' if r.meets_slo else 'MISS'} |")
    lines.append("")
    if report.saturation_qps is None:
        lines.append("**Saturation point: none** (no step met the SLO).")
    else:
        lines.append(f"**Saturation point: {report.saturation_qps:g} QPS** target "
                     f"({report.saturation_achieved_qps:.1f} QPS achieved).")
    if report.first_miss_qps is not None:
        lines.append(f"First step missing the SLO: {report.first_miss_qps:g} QPS.")
    lines.append(f"Verdict: **{report.verdict}** (required: SLO met at {report.require_qps:g} QPS).")
    if report.verdict == "inconclusive":
        lines.append("The load generator ran out of CPU before the service missed the SLO: rerun with more Locust "
                     "processes (`--processes N`) to find the service's saturation point.")
    lines.append("Generator CPU % is Locust's own sample of its busiest process, which Locust refreshes every 10 s: "
                 "a step shorter than that can show 0 or the previous step's value.")
    if any(r.bottleneck == "users" for r in report.steps):
        lines.append("Some steps were limited by the users (latency >= 1/user-rate): the offered load was below "
                     "target there, which happens only once latency is far above the SLO.")
    return "\n".join(lines) + "\n"


def render_plot(report: Report, path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = [r.target_qps for r in report.steps]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 7))
    top.plot(targets, targets, ls="--", c="grey", label="target")
    top.plot(targets, [report.min_ratio * t for t in targets], ls=":", c="grey", label=f"{report.min_ratio:.0%} of target")
    top.plot(targets, [r.achieved_qps for r in report.steps], marker="o", c="tab:blue", label="achieved")
    top.set_ylabel("QPS")
    top.legend(loc="upper left")
    for name, color in (("p50_ms", "tab:green"), ("p95_ms", "tab:orange"), ("p99_ms", "tab:red")):
        bottom.plot(targets, [getattr(r, name) for r in report.steps], marker="o", c=color, label=name[:3].upper())
    bottom.axhline(report.slo_p99_ms, c="red", ls="--", label=f"{report.slo_p99_ms:g} ms SLO")
    worst = max((r.p99_ms for r in report.steps if not math.isnan(r.p99_ms)), default=0.0)
    bottom.set_ylim(0, max(1.25 * report.slo_p99_ms, 1.1 * worst))
    bottom.set_ylabel("latency (ms)")
    bottom.set_xlabel("target QPS")
    bottom.legend(loc="upper left", ncol=4)
    if report.saturation_qps is not None:
        for axis in (top, bottom):
            axis.axvline(report.saturation_qps, c="black", alpha=0.4)
        top.annotate(f"saturation {report.saturation_qps:g} QPS", (report.saturation_qps, report.saturation_achieved_qps),
                     textcoords="offset points", xytext=(6, -14))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _json_safe(value):
    """NaN (a step without requests) -> null: strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv-prefix", required=True, help="the --csv prefix given to locust")
    parser.add_argument("--out-prefix", help="where to write <out>_report.{md,json,png} (default: the csv prefix)")
    parser.add_argument("--title", help="report title (default: the prefix's file name)")
    parser.add_argument("--slo-p99-ms", type=float, default=50.0)
    parser.add_argument("--min-ratio", type=float, default=0.95, help="achieved/target a step needs")
    parser.add_argument("--require-qps", type=float, help="the SLO holds when met at this target (default: the last)")
    args = parser.parse_args(argv)

    from loadtest._ramp import read_steps

    out = args.out_prefix or args.csv_prefix
    title = args.title or f"Load ramp: {out.rsplit('/', 1)[-1]}"
    try:
        steps = read_steps(f"{args.csv_prefix}_steps.csv")
        history = read_history(f"{args.csv_prefix}_stats_history.csv")
        report = build_report(steps, history, args.slo_p99_ms, args.min_ratio, args.require_qps)
    except (OSError, ValueError, KeyError) as error:
        print(f"report: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    markdown = render_markdown(report, title)
    with open(f"{out}_report.md", "w") as handle:
        handle.write(markdown)
    with open(f"{out}_report.json", "w") as handle:
        json.dump(_json_safe(asdict(report)), handle, indent=2, allow_nan=False)
    render_plot(report, f"{out}_report.png", title)
    print(markdown)
    return {"held": EXIT_HELD, "missed": EXIT_MISSED, "inconclusive": EXIT_INCONCLUSIVE}[report.verdict]


if __name__ == "__main__":
    sys.exit(main())
