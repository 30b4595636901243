"""Prometheus rules and config, Alertmanager config, and Grafana dashboards, checked with the real tools."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import yaml

from .conftest import REPO, require_tool, run_tool
from .promql_catalog import (ALERTS, DASHBOARDS, PROMETHEUS_SERIES, Expression, alert_expressions,
                             dashboard_expressions, exported_series, grouping_labels, metric_names, parseable,
                             selector_labels)

ALL_EXPRESSIONS = alert_expressions() + dashboard_expressions()


def contract_p99() -> str:
    text = (REPO / "docs" / "architecture.md").read_text()
    match = re.search(r"The P99 expression used by the alert and the dashboard:\s*`([^`]+)`", text)
    assert match, "docs/architecture.md no longer states the P99 expression"
    return match.group(1)


def test_promtool_checks_the_prometheus_config_and_its_rule_files():
    promtool = require_tool("promtool")
    out = run_tool([promtool, "check", "config", str(REPO / "prometheus" / "prometheus.yml")])
    assert "1 rule files found" in out.stdout + out.stderr


def test_promtool_checks_the_alert_rules():
    promtool = require_tool("promtool")
    run_tool([promtool, "check", "rules", str(ALERTS)])


def test_promtool_unit_tests_of_every_alert_pass():
    promtool = require_tool("promtool")
    run_tool([promtool, "test", "rules", str(REPO / "prometheus" / "alerts_test.yml")])


def test_every_alert_is_unit_tested_both_firing_and_quiet():
    alerts = {rule["alert"] for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]}
    cases = [case for test in yaml.safe_load((REPO / "prometheus" / "alerts_test.yml").read_text())["tests"]
             for case in test.get("alert_rule_test", [])]
    fires = {case["alertname"] for case in cases if case.get("exp_alerts")}
    quiet = {case["alertname"] for case in cases if not case.get("exp_alerts")}
    assert alerts - fires == set(), "alerts with no test that makes them fire"
    assert alerts - quiet == set(), "alerts with no test that keeps them quiet"


def test_unit_tests_fail_when_the_latency_threshold_is_broken(tmp_path):
    """The promtool tests can fail: raise the P99 threshold and the firing case must break."""
    promtool = require_tool("promtool")
    rules = ALERTS.read_text()
    assert "]))) > 0.05\n" in rules
    (tmp_path / "alerts.yml").write_text(rules.replace("]))) > 0.05\n", "]))) > 0.2\n"))
    (tmp_path / "alerts_test.yml").write_text((REPO / "prometheus" / "alerts_test.yml").read_text())
    result = subprocess.run([promtool, "test", "rules", str(tmp_path / "alerts_test.yml")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0 and "HgemmP99LatencyHigh" in result.stdout + result.stderr


def test_amtool_checks_the_alertmanager_config():
    amtool = require_tool("amtool")
    out = run_tool([amtool, "check-config", str(REPO / "alertmanager" / "alertmanager.yml")])
    assert "SUCCESS" in out.stdout


def test_every_page_alert_routes_to_the_webhook_receiver():
    amtool = require_tool("amtool")
    out = run_tool([amtool, "config", "routes", "test", f"--config.file={REPO / 'alertmanager' / 'alertmanager.yml'}",
                    "severity=page", "alertname=HgemmServiceDown"])
    assert out.stdout.strip() == "hgemm-webhook"


def test_every_promql_expression_parses(tmp_path):
    """promtool has no offline `parse`: each expression becomes a recording rule and `check rules` parses it."""
    promtool = require_tool("promtool")
    rules = {"groups": [{"name": "parse", "rules": [{"record": f"parse:expr_{i}", "expr": parseable(e.expr)}
                                                     for i, e in enumerate(ALL_EXPRESSIONS)]}]}
    path = tmp_path / "expressions.yml"
    path.write_text(yaml.safe_dump(rules))
    out = run_tool([promtool, "check", "rules", str(path)])
    assert f"{len(ALL_EXPRESSIONS)} rules found" in out.stdout


def test_the_parse_check_rejects_a_broken_expression(tmp_path):
    promtool = require_tool("promtool")
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "parse", "rules": [
        {"record": "parse:broken", "expr": parseable("sum by (le (rate(hgemm_batch_size_bucket[$__rate_interval]))")}]}]}))
    assert subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, timeout=60).returncode != 0


@pytest.mark.parametrize("expression", ALL_EXPRESSIONS, ids=lambda e: e.source)
def test_every_metric_and_label_named_is_exported_by_the_service(expression: Expression):
    exported = exported_series().labels
    known = {**exported, **PROMETHEUS_SERIES}
    names = metric_names(expression.expr)
    assert names, f"{expression.source} names no metric"
    unknown = names - set(known)
    assert not unknown, f"{expression.source} names metrics the service does not export: {sorted(unknown)}"
    for metric, label in selector_labels(expression.expr):
        assert label in known[metric], f"{expression.source}: {metric} has no label {label!r}"
    usable = set().union(*(known[name] for name in names))
    assert grouping_labels(expression.expr) <= usable, f"{expression.source} groups by labels no metric has"


def test_alert_and_dashboard_use_the_contract_p99_expression_verbatim():
    p99 = contract_p99()
    alert = next(e.expr for e in alert_expressions() if e.source.endswith("HgemmP99LatencyHigh"))
    assert alert == f"{p99} > 0.05"
    assert p99 in [e.expr for e in dashboard_expressions()]


def test_the_committed_dashboard_is_what_the_generator_writes():
    result = subprocess.run([sys.executable, "-c", "import runpy, sys; sys.argv=['x'];"
                             "g = runpy.run_path('grafana/make_dashboard.py', run_name='lib'); print(g['render'](), end='')"],
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO / "grafana" / "dashboards" / "hgemm.json").read_text(), \
        "run `python grafana/make_dashboard.py` and commit the JSON"


def test_dashboards_are_well_formed_and_cover_the_required_panels():
    assert DASHBOARDS
    provisioned = yaml.safe_load((REPO / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    datasource_uids = {source["uid"] for source in provisioned["datasources"]}
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        assert board["uid"] and board["title"] and board["schemaVersion"] >= 36
        ids = [panel["id"] for panel in board["panels"]]
        assert len(ids) == len(set(ids)), "duplicate panel ids"
        for panel in board["panels"]:
            assert panel["targets"], panel["title"]
            assert panel["datasource"]["uid"] in datasource_uids
            assert {"h", "w", "x", "y"} <= set(panel["gridPos"])
    text = " ".join(e.expr for e in dashboard_expressions())
    for metric in ("hgemm_requests_total", "hgemm_request_duration_seconds_bucket", "hgemm_queue_wait_seconds_bucket",
                   "hgemm_batch_size_bucket", "hgemm_compute_seconds_bucket", "hgemm_fallbacks_total",
                   "hgemm_kernel_selections_total", "hgemm_gpu_utilization_ratio", "hgemm_gpu_memory_used_bytes",
                   "ALERTS"):
        assert metric in text, f"no panel shows {metric}"
    latency = next(p for b in DASHBOARDS for p in json.loads(b.read_text())["panels"] if "P99" in p["title"])
    steps = latency["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert any(step["value"] == 0.05 for step in steps), "the latency panel lacks the 50 ms threshold line"


def test_grafana_dashboard_provider_points_at_the_mounted_dashboards():
    provider = yaml.safe_load((REPO / "grafana" / "provisioning" / "dashboards" / "hgemm.yml").read_text())
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    mounts = compose["services"]["grafana"]["volumes"]
    path = provider["providers"][0]["options"]["path"]
    assert f"./grafana/dashboards:{path}:ro" in mounts


def test_the_naming_check_catches_a_misspelt_metric_and_label():
    exported = exported_series().labels
    assert metric_names('sum(rate(hgemm_request_total{endpoint="/v1/hgemm"}[1m]))') - set(exported) == \
        {"hgemm_request_total"}
    assert "route" not in exported["hgemm_requests_total"]
