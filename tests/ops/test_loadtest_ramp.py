"""A short, bounded ramp through the real code path: loadtest/run_ramp.sh (headless Locust, the ramp shape, the
report) against the real service on the CPU backend, on loopback. Low rates and a few seconds per step; no timing
assertions beyond what the report itself judges and the paced users' request counts. It runs once in one Locust
process and once distributed (a master and two workers), where Locust's statistics reach the master only every few
seconds: the per-step rows must be right either way."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess

import pytest

from loadtest._ramp import read_steps

from .conftest import PYTHON, REPO

STEPS = {"LOCUST_RAMP_START": "4", "LOCUST_RAMP_STOP": "8", "LOCUST_RAMP_STEP": "4", "LOCUST_STEP_DURATION": "7",
         "LOCUST_STEP_WARMUP": "2", "LOCUST_USER_RATE": "4", "LOCUST_SHAPE": "16x256x64", "LOCUST_LOGLEVEL": "WARNING"}


@pytest.mark.parametrize("locust_args", [[], ["--processes", "2"]], ids=["local", "distributed"])
def test_a_short_ramp_produces_a_consistent_report(service, tmp_path, locust_args):
    scenario = "resident"
    env = {**os.environ, **STEPS, "PYTHON": PYTHON}
    extra = ["--", *locust_args] if locust_args else []
    result = subprocess.run([str(REPO / "loadtest" / "run_ramp.sh"), service, scenario, str(tmp_path), *extra],
                            env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    prefix = tmp_path / scenario
    report_json = prefix.with_name(f"{scenario}_report.json")
    assert report_json.exists(), result.stdout + result.stderr
    report = json.loads(report_json.read_text())
    assert prefix.with_name(f"{scenario}_report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Saturation point" in prefix.with_name(f"{scenario}_report.md").read_text()

    steps = report["steps"]
    assert [s["target_qps"] for s in steps] == [4.0, 8.0]
    assert [s["users"] for s in steps] == [1, 2]
    rows = read_steps(f"{prefix}_steps.csv")
    for step, row in zip(steps, rows, strict=True):
        # each paced user sends user_rate requests/s, so the measured window holds target × seconds requests, give
        # or take one per user (its phase) and a little slack for a busy CI machine
        assert row.seconds == 7 - 2
        expected = row.target_qps * row.seconds
        assert abs(step["requests"] - expected) <= row.users + 0.1 * expected, (steps, result.stdout)
        assert step["p50_ms"] <= step["p95_ms"] <= step["p99_ms"]
        assert math.isclose(step["achieved_ratio"], step["achieved_qps"] / step["target_qps"], rel_tol=1e-9)
        if step["history_qps"] is not None:   # Locust's own history agrees (integer-second timestamps)
            assert 0.5 * step["achieved_qps"] <= step["history_qps"] <= 1.5 * step["achieved_qps"] + 1
        expected_slo = step["achieved_ratio"] >= 0.95 and step["p99_ms"] < 50 and step["failures"] == 0
        assert step["meets_slo"] == expected_slo
    passing = [s["target_qps"] for s in steps if s["meets_slo"]]
    assert report["saturation_qps"] == (max(passing) if passing else None)
    assert result.returncode == {"held": 0, "missed": 1, "inconclusive": 3}[report["verdict"]], result.stderr
    # Locust's own per-name statistics hold the same per-step counts: the request names carry the steps
    with open(f"{prefix}_stats.csv", newline="") as handle:
        counts = {raw["Name"]: int(raw["Request Count"]) for raw in csv.DictReader(handle)}
    for step in steps:
        assert counts[f"resident 16x256x64 step {step['step']:02d} @{step['target_qps']:g}qps"] == step["requests"]
    # the service's own histograms, scraped during the run, split by step: every step has a row whose server-side
    # request count matches Locust's to within the scrape windows' widening
    server_rows = [line for line in prefix.with_name(f"{scenario}_server_steps.md").read_text().splitlines()
                   if line.startswith("| ") and line[2].isdigit()]
    assert [float(line.split("|")[1]) for line in server_rows] == [4.0, 8.0]
    # the resident operand was deleted when the test stopped
    import httpx
    assert httpx.get(f"{service}/v1/operands", timeout=10).json()["operands"] == []
