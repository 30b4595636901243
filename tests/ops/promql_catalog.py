"""Every PromQL expression the monitoring config holds (alert rules, dashboards), and the metrics and labels the
service really exports (read from service.metrics), for the parse and naming checks."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import yaml

REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "prometheus" / "alerts.yml"
DASHBOARDS = sorted((REPO / "grafana" / "dashboards").glob("*.json"))
# Series Prometheus makes itself: scrape health and alert state.
PROMETHEUS_SERIES = {"up": {"job", "instance"}, "ALERTS": {"alertname", "alertstate", "severity", "instance", "job"}}
TARGET_LABELS = {"instance", "job"}
# Grafana's interval variables, replaced by a duration so promtool can parse the expression.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h"}


@dataclass(frozen=True)
class Expression:
    source: str
    expr: str


def alert_expressions() -> list[Expression]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [Expression(f"alerts.yml:{rule['alert']}", rule["expr"]) for group in rules["groups"]
            for rule in group["rules"]]


def dashboard_expressions() -> list[Expression]:
    found = []
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                found.append(Expression(f"{path.name}:{panel['title']}:{target['refId']}", target["expr"]))
    return found


def parseable(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


@dataclass
class Exported:
    labels: dict[str, set[str]] = field(default_factory=dict)   # sample name -> label names


def exported_series() -> Exported:
    """Sample names (with _total, _bucket, ...) and their labels, from the service's own metrics definitions."""
    from prometheus_client.metrics import MetricWrapperBase

    from service.metrics import Metrics, NvmlCollector

    metrics = Metrics()
    exported = Exported()
    for value in vars(metrics).values():
        if not isinstance(value, MetricWrapperBase):
            continue
        labels = set(value._labelnames) | TARGET_LABELS
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"], "gauge": [""]}[value._type]
        for suffix in suffixes:
            exported.labels[value._name + suffix] = labels | ({"le"} if suffix == "_bucket" else set())
    # The NVML collector only registers on a GPU machine: collect it once with a stand-in NVML (fakes are for the GPU).
    collector = NvmlCollector.__new__(NvmlCollector)
    collector.index, collector.handle = 0, None
    collector.nvml = SimpleNamespace(nvmlDeviceGetUtilizationRates=lambda handle: SimpleNamespace(gpu=50),
                                     nvmlDeviceGetMemoryInfo=lambda handle: SimpleNamespace(used=1, total=2))
    # Likewise the fast path's collector (GPU backend only), with stand-in stats.
    from service.metrics import FastPathCollector

    for family in [*collector.collect(), *FastPathCollector(lambda: {"hits": 1, "misses": 1, "entries": 1}).collect()]:
        for sample in family.samples:
            exported.labels[sample.name] = set(sample.labels) | TARGET_LABELS
    return exported


IDENTIFIER_BEFORE_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
HGEMM_NAME = re.compile(r"\bhgemm_[a-z0-9_]+\b")
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*')
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def metric_names(expr: str) -> set[str]:
    return set(HGEMM_NAME.findall(expr)) | {name for name, _ in IDENTIFIER_BEFORE_SELECTOR.findall(expr)}


def selector_labels(expr: str) -> list[tuple[str, str]]:
    """(metric, label) for every matcher in a selector."""
    found = []
    for name, body in IDENTIFIER_BEFORE_SELECTOR.findall(expr):
        for part in filter(None, (p.strip() for p in body.split(","))):
            match = MATCHER.fullmatch(part)
            assert match, f"cannot read matcher {part!r} in {expr}"
            found.append((name, match.group(1)))
    return found


def grouping_labels(expr: str) -> set[str]:
    return {label.strip() for group in GROUPING.findall(expr) for label in group.split(",") if label.strip()}
