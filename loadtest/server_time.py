"""Where a request's time went inside the service during a load run, from its own /metrics:

    python -m loadtest.server_time metrics.txt                       # one scrape after the run: the whole run
    python -m loadtest.server_time --scrapes S --steps PREFIX_steps.csv [--out PREFIX_server_steps.md]

The first form: mean and P50/P99 (bucket upper bounds) of the server-side request duration of /v1/hgemm, the batcher's
queue wait, the compute time per batch and its phases on the batch thread (GPU backend), and the mean batch size.
The second form splits the same histograms by ramp step: S is the file `python -m loadtest.scrape` wrote during the
run, and each step's window (the one Locust measured, `_steps.csv`) is the difference of the scrapes around it —
widened by at most one scrape interval at each end. Quantiles there are interpolated inside their bucket, as
Prometheus's histogram_quantile does. Set against the client's latencies (Locust), this says whether a step's time is
spent in the service or between the client and the service (HTTP, sockets, the load generator)."""
from __future__ import annotations

import argparse
import bisect
import sys

# (Locust imports every .py file in loadtest/: the parser is imported where it is used.)
from loadtest.scrape import FAMILIES, split_scrapes

ONLY = {"hgemm_request_duration_seconds": {"endpoint": "/v1/hgemm"}}  # label values a family is restricted to
BY_LABEL = {"hgemm_batch_phase_seconds": "phase"}  # one histogram per value of this label


def histograms(text: str) -> dict[tuple[str, str], dict]:
    """{(family, value of its BY_LABEL label or ""): {"buckets": {upper bound: cumulative count}, "sum", "count"}}
    for the service families of one scrape (other labels summed)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[tuple[str, str], dict] = {}
    for family in text_string_to_metric_families(text):
        if family.name not in FAMILIES:
            continue
        wanted, split = ONLY.get(family.name, {}), BY_LABEL.get(family.name)
        for sample in family.samples:
            if any(sample.labels.get(k) != v for k, v in wanted.items()):
                continue
            hist = out.setdefault((family.name, sample.labels.get(split, "") if split else ""),
                                  {"buckets": {}, "sum": 0.0, "count": 0.0})
            if sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                hist["buckets"][bound] = hist["buckets"].get(bound, 0.0) + sample.value
            elif sample.name.endswith("_sum"):
                hist["sum"] += sample.value
            elif sample.name.endswith("_count"):
                hist["count"] += sample.value
    return out


def difference(later: dict, earlier: dict) -> dict:
    """The observations between two scrapes of the same process (counters only grow)."""
    out = {}
    for key, hist in later.items():
        before = earlier.get(key, {"buckets": {}, "sum": 0.0, "count": 0.0})
        out[key] = {"buckets": {b: c - before["buckets"].get(b, 0.0) for b, c in hist["buckets"].items()},
                    "sum": hist["sum"] - before["sum"], "count": hist["count"] - before["count"]}
    return out


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """The upper bound of the bucket holding quantile q (cumulative counts, sorted by bound)."""
    total = buckets[-1][1] if buckets else 0.0
    for bound, count in buckets:
        if total and count >= q * total:
            return bound
    return float("nan")


def interpolated(buckets: list[tuple[float, float]], q: float) -> float:
    """Quantile q by linear interpolation inside its bucket (Prometheus's histogram_quantile; the lowest bucket
    starts at 0, and a quantile in the +Inf bucket is the highest finite bound)."""
    total = buckets[-1][1] if buckets else 0.0
    if not total:
        return float("nan")
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= q * total:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (q * total - below) / max(count - below, 1e-12)
        lower, below = bound, count
    return lower


def _scaled(family: str) -> tuple[float, str]:
    return (1.0, "") if family == "hgemm_batch_size" else (1e3, " ms")


def summarize(text: str) -> list[str]:
    lines = []
    for (family, value), hist in histograms(text).items():
        count = hist["count"]
        if not count:
            continue
        ordered = sorted(hist["buckets"].items())
        scale, unit = _scaled(family)
        name = f"{family}{{{BY_LABEL[family]}={value}}}" if family in BY_LABEL else family
        lines.append(f"server {name}: n={count:.0f} mean={hist['sum'] / count * scale:.2f}{unit} "
                     f"p50<={quantile(ordered, 0.5) * scale:g}{unit} p99<={quantile(ordered, 0.99) * scale:g}{unit}")
    return lines


def per_step(scrapes: list[tuple[float, str]], steps) -> list[dict]:
    """One row per ramp step with scrapes around its window: the service's own numbers for that window."""
    times = [t for t, _ in scrapes]
    rows = []
    for step in steps:
        first = bisect.bisect_right(times, step.measure_start) - 1  # the last scrape at or before the window opens
        last = bisect.bisect_left(times, step.measure_end)  # the first scrape at or after it closes
        if first < 0 or last >= len(scrapes):
            continue
        window = difference(histograms(scrapes[last][1]), histograms(scrapes[first][1]))
        row = {"target_qps": step.target_qps, "client_p50_ms": step.p50_ms, "client_p99_ms": step.p99_ms,
               "seconds": times[last] - times[first]}
        for (family, value), hist in window.items():
            count = hist["count"]
            if not count:
                continue
            ordered = sorted(hist["buckets"].items())
            scale, _ = _scaled(family)
            key = f"{family.removeprefix('hgemm_')}{'.' + value if value else ''}"
            row[f"{key}.n"] = count
            row[f"{key}.mean"] = hist["sum"] / count * scale
            row[f"{key}.p50"] = interpolated(ordered, 0.5) * scale
            row[f"{key}.p99"] = interpolated(ordered, 0.99) * scale
        rows.append(row)
    return rows


def step_table(rows: list[dict]) -> str:
    """Markdown: per step, the client's P50/P99 next to the service's request time, queue wait, batches."""
    head = ("| target QPS | client P50 / P99 ms | server request P50 / P99 ms | queue wait P50 / P99 ms | batches/s "
            "| mean batch | compute / batch ms | stage in / launch / sync / stage out / off CPU ms |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]

    def get(row, key, fmt="{:.1f}"):
        return fmt.format(row[key]) if key in row else "-"

    for r in rows:
        phases = " / ".join(get(r, f"batch_phase_seconds.{p}.mean", "{:.2f}")
                            for p in ("stage_in", "launch", "sync", "stage_out", "off_cpu"))
        batches = f"{r.get('batch_size.n', 0) / r['seconds']:.0f}" if r["seconds"] > 0 else "-"
        lines.append(
            f"| {r['target_qps']:g} | {r['client_p50_ms']:g} / {r['client_p99_ms']:g} "
            f"| {get(r, 'request_duration_seconds.p50')} / {get(r, 'request_duration_seconds.p99')} "
            f"| {get(r, 'queue_wait_seconds.p50', '{:.2f}')} / {get(r, 'queue_wait_seconds.p99', '{:.2f}')} "
            f"| {batches} | {get(r, 'batch_size.mean', '{:.2f}')} | {get(r, 'compute_seconds.mean', '{:.2f}')} "
            f"| {phases} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.server_time", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("metrics", nargs="?", help="one /metrics scrape taken after the run")
    p.add_argument("--scrapes", help="the file python -m loadtest.scrape wrote during the run")
    p.add_argument("--steps", help="the run's <prefix>_steps.csv")
    p.add_argument("--out", help="also write the per-step table here (markdown)")
    args = p.parse_args(argv)
    if args.metrics:
        with open(args.metrics) as f:
            print("\n".join(summarize(f.read())) or "no service histograms in this scrape")
        return 0
    if not (args.scrapes and args.steps):
        p.error("give one scrape, or --scrapes and --steps")
    from loadtest._ramp import read_steps

    with open(args.scrapes) as f:
        rows = per_step(split_scrapes(f.read()), read_steps(args.steps))
    if not rows:
        print("no step has scrapes on both sides of its window", file=sys.stderr)
        return 1
    table = step_table(rows)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
