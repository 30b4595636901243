"""A real Prometheus on loopback scrapes the real service (CPU backend); after bounded traffic, Prometheus's HTTP API
answers the very P99 expression of the alert and the dashboard with a sane value, and the alert rules evaluate."""
from __future__ import annotations

import math
import time

import httpx
import numpy as np
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from .conftest import REPO, Process, free_port, require_tool, wait_until
from .promql_catalog import alert_expressions

M, N, K = 16, 256, 64
REQUESTS = 40


def prometheus_config(service_url: str) -> dict:
    """The committed prometheus.yml, pointed at the loopback service, scraping every second, without Alertmanager."""
    config = yaml.safe_load((REPO / "prometheus" / "prometheus.yml").read_text())
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config["rule_files"] = [str(REPO / "prometheus" / path) for path in config["rule_files"]]
    config.pop("alerting")
    job = next(job for job in config["scrape_configs"] if job["job_name"] == "hgemm")
    job["static_configs"] = [{"targets": [service_url.removeprefix("http://")]}]
    config["scrape_configs"] = [job]
    return config


@pytest.fixture(scope="module")
def prometheus(service, tmp_path_factory):
    binary = require_tool("prometheus")
    work = tmp_path_factory.mktemp("prometheus")
    (work / "prometheus.yml").write_text(yaml.safe_dump(prometheus_config(service)))
    port = free_port()
    proc = Process([binary, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}"], work / "prometheus.log")
    yield from proc.serve(f"http://127.0.0.1:{port}", "/-/ready", 60, "Prometheus to become ready")


def query(prometheus: str, expr: str) -> list[dict]:
    body = httpx.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


def scalar(prometheus: str, expr: str) -> float | None:
    result = query(prometheus, expr)
    return float(result[0]["value"][1]) if result else None


def send_gemm(service: str, rng: np.random.Generator) -> None:
    a = rng.uniform(-1, 1, (M, K)).astype("<f2")
    b = rng.uniform(-1, 1, (N, K)).astype("<f2")
    response = httpx.post(f"{service}/v1/hgemm", params={"m": M, "n": N, "k": K, "b_layout": "col"},
                          content=a.tobytes() + b.tobytes(), headers={"Content-Type": "application/octet-stream"},
                          timeout=30)
    assert response.status_code == 200, response.text
    c = np.frombuffer(response.content, dtype="<f2").reshape(M, N).astype(np.float64)
    reference = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.linalg.norm(c - reference) / np.linalg.norm(reference) < 1e-2


def hgemm_buckets(service: str) -> dict[float, float]:
    """le -> cumulative count of /v1/hgemm latencies, from the service's own /metrics."""
    text = httpx.get(f"{service}/metrics", timeout=10).text
    family = next(f for f in text_string_to_metric_families(text) if f.name == "hgemm_request_duration_seconds")
    return {float(s.labels["le"]): s.value for s in family.samples
            if s.name.endswith("_bucket") and s.labels["endpoint"] == "/v1/hgemm"}


def test_prometheus_answers_the_p99_expression_with_a_sane_value(service, prometheus):
    p99 = next(e.expr for e in alert_expressions() if e.source.endswith("HgemmP99LatencyHigh")).removesuffix(" > 0.05")
    requests_seen = 'sum(hgemm_requests_total{endpoint="/v1/hgemm"})'
    wait_until(lambda: scalar(prometheus, 'up{job="hgemm"}') == 1.0, 30, "the first successful scrape")
    assert query(prometheus, p99) == [], "P99 before any /v1/hgemm traffic"

    rng = np.random.default_rng(7)
    send_gemm(service, rng)   # the series must exist in a scrape before the traffic, or rate() sees no increase
    wait_until(lambda: scalar(prometheus, requests_seen) == 1.0, 30, "Prometheus to see the first request")
    before = hgemm_buckets(service)
    deadline = time.monotonic() + 3.0          # spread over several scrapes
    for i in range(REQUESTS):
        send_gemm(service, rng)
        time.sleep(max(0.0, (deadline - time.monotonic()) / (REQUESTS - i)))
    wait_until(lambda: scalar(prometheus, requests_seen) == REQUESTS + 1.0, 30, "Prometheus to see all requests")
    after = hgemm_buckets(service)

    value = scalar(prometheus, p99)
    assert value is not None and math.isfinite(value) and value > 0, value
    increase = {le: after[le] - before.get(le, 0.0) for le in after}
    total = increase[math.inf]
    assert total == REQUESTS
    # Every request was at most `upper`; at least half of them took more than `lower`.
    upper = min(le for le, count in after.items() if count == after[math.inf])
    lower = max([le for le, count in increase.items() if count <= 0.5 * total], default=0.0)
    assert lower <= value <= upper, (lower, value, upper)


def test_the_alert_rules_load_and_evaluate_against_the_real_metrics(prometheus):
    def evaluated():
        groups = httpx.get(f"{prometheus}/api/v1/rules", timeout=10).json()["data"]["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        return rules if rules and all(rule.get("lastEvaluation", "").startswith("20") and
                                      not rule["lastEvaluation"].startswith("0001") for rule in rules) else None
    rules = wait_until(evaluated, 30, "every rule to be evaluated")
    names = {rule["name"] for rule in rules}
    assert names == {e.source.split(":", 1)[1] for e in alert_expressions()}
    assert all(rule["health"] == "ok" for rule in rules), [(r["name"], r.get("lastError")) for r in rules]
    down = next(rule for rule in rules if rule["name"] == "HgemmServiceDown")
    assert down["state"] == "inactive"
