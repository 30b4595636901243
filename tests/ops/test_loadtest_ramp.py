"""A short, bounded ramp through the real code path: loadtest/run_ramp.sh (headless Locust, the ramp shape, the
report) against the real service on the CPU backend, on loopback. Low rates and a few seconds per step; no timing
assertions beyond what the report itself judges."""
from __future__ import annotations

import json
import math
import os
import subprocess

import pytest

from .conftest import PYTHON, REPO

STEPS = {"LOCUST_RAMP_START": "4", "LOCUST_RAMP_STOP": "8", "LOCUST_RAMP_STEP": "4", "LOCUST_STEP_DURATION": "7",
         "LOCUST_STEP_WARMUP": "2", "LOCUST_USER_RATE": "4", "LOCUST_SHAPE": "16x256x64", "LOCUST_LOGLEVEL": "WARNING"}


@pytest.mark.parametrize("scenario", ["resident"])
def test_a_short_ramp_produces_a_consistent_report(service, tmp_path, scenario):
    env = {**os.environ, **STEPS, "PYTHON": PYTHON}
    result = subprocess.run([str(REPO / "loadtest" / "run_ramp.sh"), service, scenario, str(tmp_path)], env=env,
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    prefix = tmp_path / scenario
    report_json = prefix.with_name(f"{scenario}_report.json")
    assert report_json.exists(), result.stdout + result.stderr
    report = json.loads(report_json.read_text())
    assert prefix.with_name(f"{scenario}_report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Saturation point" in prefix.with_name(f"{scenario}_report.md").read_text()

    steps = report["steps"]
    assert [s["target_qps"] for s in steps] == [4.0, 8.0]
    assert [s["users"] for s in steps] == [1, 2]
    for step in steps:
        assert step["requests"] > 0
        assert step["p50_ms"] <= step["p95_ms"] <= step["p99_ms"]
        assert math.isclose(step["achieved_ratio"], step["achieved_qps"] / step["target_qps"], rel_tol=1e-9)
        # the paced users cannot offer more than the target (plus the window's rounding)
        assert step["achieved_qps"] <= 1.5 * step["target_qps"]
        if step["history_qps"] is not None:   # Locust's own history agrees (integer-second timestamps)
            assert 0.5 * step["achieved_qps"] <= step["history_qps"] <= 1.5 * step["achieved_qps"] + 1
        expected = step["achieved_ratio"] >= 0.95 and step["p99_ms"] < 50 and step["failures"] == 0
        assert step["meets_slo"] == expected
    passing = [s["target_qps"] for s in steps if s["meets_slo"]]
    assert report["saturation_qps"] == (max(passing) if passing else None)
    assert result.returncode == {"held": 0, "missed": 1, "inconclusive": 3}[report["verdict"]], result.stderr
    # the resident operand was deleted when the test stopped
    import httpx
    assert httpx.get(f"{service}/v1/operands", timeout=10).json()["operands"] == []
