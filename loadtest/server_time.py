"""Where a request's time went inside the service over a whole load run, from one /metrics scrape:

    python -m loadtest.server_time metrics.txt

Mean and P50/P99 (bucket upper bounds) of the server-side request duration of /v1/hgemm, the batcher's queue wait,
the compute time per batch and its phases on the batch thread (GPU backend), and the mean batch size. Set against the client's latencies (Locust), it says whether
time is spent in the service or between the client and the service (HTTP, sockets, the load generator)."""
import sys

# (Locust imports every .py file in loadtest/: the parser is imported where it is used.)

HISTOGRAMS = {"hgemm_request_duration_seconds": {"endpoint": "/v1/hgemm"}, "hgemm_queue_wait_seconds": {},
              "hgemm_compute_seconds": {}, "hgemm_batch_phase_seconds": {}, "hgemm_batch_size": {}}
BY_LABEL = {"hgemm_batch_phase_seconds": "phase"}  # one line per value of this label


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """The upper bound of the bucket holding quantile q (cumulative counts, sorted by bound)."""
    total = buckets[-1][1] if buckets else 0.0
    for bound, count in buckets:
        if total and count >= q * total:
            return bound
    return float("nan")


def summarize(text: str) -> list[str]:
    from prometheus_client.parser import text_string_to_metric_families

    lines = []
    for family in text_string_to_metric_families(text):
        wanted = HISTOGRAMS.get(family.name)
        if wanted is None:
            continue
        split = BY_LABEL.get(family.name)
        groups: dict[str, dict] = {}
        for sample in family.samples:
            if any(sample.labels.get(k) != v for k, v in wanted.items()):
                continue
            group = groups.setdefault(sample.labels.get(split, "") if split else "",
                                      {"buckets": {}, "sum": 0.0, "count": 0.0})
            if sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                group["buckets"][bound] = group["buckets"].get(bound, 0.0) + sample.value
            elif sample.name.endswith("_sum"):
                group["sum"] += sample.value
            elif sample.name.endswith("_count"):
                group["count"] += sample.value
        for value, group in groups.items():
            count = group["count"]
            if not count:
                continue
            ordered = sorted(group["buckets"].items())
            scale, unit = (1.0, "") if family.name == "hgemm_batch_size" else (1e3, " ms")
            name = f"{family.name}{{{split}={value}}}" if split else family.name
            lines.append(f"server {name}: n={count:.0f} mean={group['sum'] / count * scale:.2f}{unit} "
                         f"p50<={quantile(ordered, 0.5) * scale:g}{unit} p99<={quantile(ordered, 0.99) * scale:g}{unit}")
    return lines


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print("\n".join(summarize(f.read())) or "no service histograms in this scrape")
