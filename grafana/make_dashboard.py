"""Generates grafana/dashboards/hgemm.json from the panel list below (dashboard as data; the JSON is committed).

Run `python grafana/make_dashboard.py` after editing; tests/ops checks that the committed JSON is this script's output,
that every expression parses (promtool) and that every metric it names is one the service exports.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "dashboards" / "hgemm.json"
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}   # the uid provisioned in provisioning/datasources
SLO_SECONDS = 0.05

# The contract's P99 expression (docs/architecture.md, Contract 4), verbatim; P50/P95 are the same with another q.
P99 = ('histogram_quantile(0.99, sum by (le) '
       '(rate(hgemm_request_duration_seconds_bucket{endpoint="/v1/hgemm"}[1m])))')


def latency_quantile(q: str) -> str:
    return P99.replace("0.99", q, 1)


def histogram_quantiles(metric: str, by: str = "") -> list[tuple[str, str]]:
    group = f"le, {by}" if by else "le"
    suffix = f" {{{{{by}}}}}" if by else ""
    return [(f"histogram_quantile({q}, sum by ({group}) (rate({metric}_bucket[$__rate_interval])))", f"p{q[2:]}{suffix}")
            for q in ("0.5", "0.99")]


# (title, panel type, unit, [(expr, legend)], extra options); laid out two per row.
PANELS = [
    ("Requests per second by endpoint and status", "timeseries", "reqps",
     [('sum by (endpoint, status) (rate(hgemm_requests_total[$__rate_interval]))', "{{endpoint}} {{status}}")], {}),
    ("/v1/hgemm latency P50 / P95 / P99 (SLO: P99 < 50 ms)", "timeseries", "s",
     [(latency_quantile("0.5"), "p50"), (latency_quantile("0.95"), "p95"), (P99, "p99")], {"slo_line": True}),
    ("Queue wait (P50 / P99)", "timeseries", "s", histogram_quantiles("hgemm_queue_wait_seconds"), {}),
    ("Queue depth, capacity and in-flight requests", "timeseries", "short",
     [("sum(hgemm_queue_depth)", "queue depth"), ("sum(hgemm_queue_capacity)", "queue capacity"),
      ("sum(hgemm_inflight_requests)", "in flight")], {}),
    ("Batch size distribution (batches per second by size)", "heatmap", "short",
     [("sum by (le) (rate(hgemm_batch_size_bucket[$__rate_interval]))", "{{le}}")], {"heatmap": True}),
    ("Mean batch size", "timeseries", "short",
     [("sum(rate(hgemm_batch_size_sum[$__rate_interval])) / sum(rate(hgemm_batch_size_count[$__rate_interval]))",
       "mean batch size")], {}),
    ("Compute time per batch by backend (P50 / P99)", "timeseries", "s",
     histogram_quantiles("hgemm_compute_seconds", by="backend"), {}),
    # off_cpu is part of the other four (the time the thread spent without the CPU): lines, not a stack
    ("Batch thread: mean seconds per batch by phase (GPU backend)", "timeseries", "s",
     [("sum by (phase) (rate(hgemm_batch_phase_seconds_sum[$__rate_interval])) / "
       "sum by (phase) (rate(hgemm_batch_phase_seconds_count[$__rate_interval]))", "{{phase}}")], {}),
    ("Fallbacks by reason", "timeseries", "ops",
     [("sum by (reason) (rate(hgemm_fallbacks_total[$__rate_interval]))", "{{reason}}")], {"stack": True}),
    ("Kernel mix (GEMMs per second by kernel)", "timeseries", "ops",
     [("sum by (kernel) (rate(hgemm_kernel_selections_total[$__rate_interval]))", "{{kernel}}")], {"stack": True}),
    ("Rejected requests by reason", "timeseries", "reqps",
     [("sum by (reason) (rate(hgemm_rejected_total[$__rate_interval]))", "{{reason}}")], {"stack": True}),
    ("GPU utilization", "timeseries", "percentunit",
     [("max by (gpu) (hgemm_gpu_utilization_ratio)", "GPU {{gpu}}")], {"max": 1}),
    ("GPU memory", "timeseries", "bytes",
     [("max by (gpu) (hgemm_gpu_memory_used_bytes)", "used, GPU {{gpu}}"),
      ("max by (gpu) (hgemm_gpu_memory_total_bytes)", "total, GPU {{gpu}}")], {}),
    ("Resident operands", "timeseries", "bytes",
     [("sum(hgemm_resident_operand_bytes)", "bytes held"), ("sum(hgemm_resident_budget_bytes)", "budget")], {}),
    ("Ready and backend", "stat", "none",
     [("min(hgemm_ready)", "ready"), ("sum by (backend, device) (hgemm_backend_info)", "{{backend}} {{device}}"),
      ("sum(hgemm_workers)", "worker processes")], {}),
    ("C fast path: GEMMs per second by outcome, prepared launches", "timeseries", "ops",
     [("sum by (result) (rate(hgemm_fastpath_calls_total[$__rate_interval]))", "{{result}}"),
      ("sum(hgemm_fastpath_entries)", "entries")], {}),
    ("Alerts (Prometheus ALERTS: 1 = pending or firing)", "state-timeline", "none",
     [('max by (alertname, alertstate) (ALERTS{alertname=~"Hgemm.*"})', "{{alertname}} {{alertstate}}")], {}),
]


def field_config(unit: str, extra: dict) -> dict:
    defaults: dict = {"unit": unit, "custom": {}}
    if "max" in extra:
        defaults["max"] = extra["max"]
        defaults["min"] = 0
    if extra.get("stack"):
        defaults["custom"]["stacking"] = {"mode": "normal", "group": "A"}
    if extra.get("slo_line"):
        defaults["thresholds"] = {"mode": "absolute",
                                  "steps": [{"color": "green", "value": None}, {"color": "red", "value": SLO_SECONDS}]}
        defaults["custom"]["thresholdsStyle"] = {"mode": "line+area"}
    return {"defaults": defaults, "overrides": []}


def panel(index: int, title: str, kind: str, unit: str, queries: list[tuple[str, str]], extra: dict) -> dict:
    targets = []
    for ref, (expr, legend) in zip("ABCDEFGH", queries):
        target = {"refId": ref, "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
        if extra.get("heatmap"):
            target["format"] = "heatmap"
        targets.append(target)
    body = {"id": index + 1, "type": kind, "title": title, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
            "targets": targets, "fieldConfig": field_config(unit, extra)}
    if kind == "heatmap":
        body["options"] = {"calculate": False, "yAxis": {"unit": unit}, "cellGap": 1}
    return body


def dashboard() -> dict:
    return {
        "uid": "hgemm-service", "title": "HGEMM service", "tags": ["hgemm"], "timezone": "browser",
        "schemaVersion": 39, "version": 1, "editable": True, "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"},
        "templating": {"list": []}, "annotations": {"list": []},
        "panels": [panel(i, *spec) for i, spec in enumerate(PANELS)],
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
    print(f"wrote {OUT}", file=sys.stderr)
