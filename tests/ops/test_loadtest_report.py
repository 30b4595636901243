"""The saturation report's arithmetic on hand-made CSVs, the ramp plan, the step names requests get, and the per-step
rows built from Locust's real statistics objects merged across workers."""
from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from loadtest import report
from loadtest._ramp import (STEP_COLUMNS, RampClock, StepStats, parse_targets, plan_steps, read_steps, request_name,
                            step_at, write_steps)

from .conftest import REPO

HISTORY_HEADER = ["Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s", "50%", "99%",
                  "Total Request Count", "Total Failure Count"]


def step_row(index, target, requests, p99, failures=0, seconds=10.0, cpu=20.0, avg=5.0, user_rate=10.0):
    start = 1_000_000.0 + 100 * index
    return StepStats(index, target, math.ceil(target / user_rate), user_rate, 30.0 * index, 30.0 * (index + 1), start,
                     start + seconds, requests, failures, p99 / 3, p99 / 1.5, p99, avg, p99 * 1.2, cpu)


def write_run(prefix, rows, history_rows=()):
    write_steps(f"{prefix}_steps.csv", rows)
    with open(f"{prefix}_stats_history.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HISTORY_HEADER)
        for timestamp, count in history_rows:
            writer.writerow([timestamp, 5, "", "Aggregated", 0, 0, 1, 2, count, 0])
            writer.writerow([timestamp, 5, "POST", "binary", 0, 0, 1, 2, count, 0])   # --csv-full-history rows


def test_plan_rounds_each_target_up_to_whole_users_and_lays_steps_end_to_end():
    steps = plan_steps(50, 500, 50, 30, 10, 5)
    assert [s.target_qps for s in steps] == list(range(50, 501, 50))
    assert [s.users for s in steps] == list(range(5, 51, 5))
    assert all(b.start_s == a.end_s for a, b in zip(steps, steps[1:]))
    odd = plan_steps(25, 25, 10, 30, 10, 5)
    assert odd[0].users == 3 and odd[0].target_qps == 30   # the offered load is what the users really offer
    assert step_at(steps, 0).index == 0 and step_at(steps, 299.9).index == 9 and step_at(steps, 300) is None


@pytest.mark.parametrize("bad", [dict(start_qps=0), dict(stop_qps=10), dict(user_rate=0), dict(warmup_s=29),
                                 dict(warmup_s=1)])   # 1 s: a step's users may not all run yet (tick + spawn)
def test_plan_rejects_impossible_ramps(bad):
    args = dict(start_qps=50, stop_qps=500, step_qps=50, step_s=30, user_rate=10, warmup_s=5) | bad
    with pytest.raises(ValueError):
        plan_steps(**args)


def test_plan_from_a_target_list_hits_the_chosen_points_in_order():
    steps = plan_steps(50, 500, 50, 6, 10, 2, targets=parse_targets("50, 500,2000,2500"))
    assert [s.target_qps for s in steps] == [50, 500, 2000, 2500] and [s.users for s in steps] == [5, 50, 200, 250]
    assert [s.start_s for s in steps] == [0, 6, 12, 18]
    assert parse_targets("") == [] and parse_targets(" 50 100\t150 ") == parse_targets("50,100,150") == [50, 100, 150]
    with pytest.raises(ValueError):
        parse_targets("50,fast")
    with pytest.raises(ValueError):
        plan_steps(50, 500, 50, 6, 10, 2, targets=[500, 0])


def test_requests_are_named_after_the_step_they_are_sent_in():
    steps = plan_steps(50, 100, 50, 30, 10, 5)
    names = {t: request_name("resident 64x4096x64", steps, t) for t in (0, 4.99, 5, 29.99, 30, 35, 59.99, 60, 61)}
    assert names == {0: "resident 64x4096x64 step 00 warmup", 4.99: "resident 64x4096x64 step 00 warmup",
                     5: "resident 64x4096x64 step 00 @50qps", 29.99: "resident 64x4096x64 step 00 @50qps",
                     30: "resident 64x4096x64 step 01 warmup", 35: "resident 64x4096x64 step 01 @100qps",
                     59.99: "resident 64x4096x64 step 01 @100qps", 60: "resident 64x4096x64 drain",
                     61: "resident 64x4096x64 drain"}
    assert steps[1].label == "step 01 @100qps" and steps[1].measured_s == 25
    clock = RampClock()
    assert clock.name("x") == "x drain"          # before test_start: never counted in a step
    clock.start(steps)
    assert clock.name("x") == "x step 00 warmup" and clock.started_unix > 1.7e9


def test_steps_csv_round_trips():
    rows = [step_row(0, 50, 500, 12.0), step_row(1, 100, 990, 20.0, failures=2)]
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        write_steps(f"{tmp}/x_steps.csv", rows)
        assert read_steps(f"{tmp}/x_steps.csv") == rows
        with open(f"{tmp}/x_steps.csv") as handle:
            assert tuple(handle.readline().strip().split(",")) == STEP_COLUMNS


def test_saturation_is_the_highest_step_meeting_all_three_conditions(tmp_path):
    rows = [step_row(0, 50, 500, 10.0),          # 50 QPS achieved: ok
            step_row(1, 100, 960, 30.0),         # 96%: ok
            step_row(2, 150, 1400, 45.0),        # 93.3% < 95%: miss
            step_row(3, 200, 2000, 49.0),        # ok again (the highest passing step counts)
            step_row(4, 250, 2500, 50.0),        # P99 = 50 ms is not < 50: miss
            step_row(5, 300, 3000, 20.0, failures=1)]   # one failure: miss
    write_run(tmp_path / "run", rows, [(1_000_000 + t, 50 * t) for t in range(0, 11)])
    code = report.main(["--csv-prefix", str(tmp_path / "run")])
    data = json.loads((tmp_path / "run_report.json").read_text())
    assert [s["meets_slo"] for s in data["steps"]] == [True, True, False, True, False, False]
    assert [round(s["achieved_qps"], 6) for s in data["steps"]] == [50, 96, 140, 200, 250, 300]
    assert data["saturation_qps"] == 200 and data["saturation_achieved_qps"] == 200
    assert data["first_miss_qps"] == 150
    assert data["steps"][0]["history_qps"] == 50.0    # from the Aggregated rows inside the window only
    assert data["steps"][1]["history_qps"] is None    # no history rows in that window
    assert data["verdict"] == "missed" and code == report.EXIT_MISSED
    assert (tmp_path / "run_report.png").read_bytes()[:4] == b"\x89PNG"
    assert "**Saturation point: 200 QPS**" in (tmp_path / "run_report.md").read_text()


def test_exit_status_says_whether_the_slo_held(tmp_path):
    write_run(tmp_path / "ok", [step_row(0, 50, 500, 10.0), step_row(1, 100, 1000, 12.0)])
    assert report.main(["--csv-prefix", str(tmp_path / "ok")]) == report.EXIT_HELD
    assert report.main(["--csv-prefix", str(tmp_path / "ok"), "--require-qps", "150"]) == report.EXIT_MISSED
    assert report.main(["--csv-prefix", str(tmp_path / "ok"), "--slo-p99-ms", "11"]) == report.EXIT_MISSED
    assert report.main(["--csv-prefix", str(tmp_path / "missing")]) == report.EXIT_BAD_INPUT


def test_a_miss_caused_by_the_generator_is_inconclusive_and_users_limits_are_flagged(tmp_path):
    rows = [step_row(0, 50, 500, 10.0), step_row(1, 100, 700, 10.0, cpu=97.0),
            step_row(2, 150, 600, 400.0, avg=150.0)]
    write_run(tmp_path / "gen", rows)
    assert report.main(["--csv-prefix", str(tmp_path / "gen")]) == report.EXIT_INCONCLUSIVE
    data = json.loads((tmp_path / "gen_report.json").read_text())
    assert [s["bottleneck"] for s in data["steps"]] == ["", "generator cpu", "users"]
    assert "--processes" in (tmp_path / "gen_report.md").read_text()


def test_a_step_without_requests_misses_and_reports_nulls(tmp_path):
    empty = step_row(0, 50, 0, math.nan)
    write_run(tmp_path / "empty", [empty])
    assert report.main(["--csv-prefix", str(tmp_path / "empty")]) == report.EXIT_MISSED
    data = json.loads((tmp_path / "empty_report.json").read_text())   # strict JSON: NaN became null
    assert data["steps"][0]["p99_ms"] is None and data["saturation_qps"] is None


def test_step_rows_are_exact_from_locust_stats_merged_across_workers():
    """Locust monkey-patches the process (gevent) on import, so the rows are built from Locust's real statistics
    objects in a child process."""
    result = subprocess.run([sys.executable, str(Path(__file__).with_name("locust_step_rows_check.py"))],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("step rows checks passed")


def test_generator_cpu_is_the_busiest_process_in_distributed_mode():
    from loadtest._ramp import generator_cpu
    runner = SimpleNamespace(current_cpu_usage=10.0, clients={"a": SimpleNamespace(cpu_usage=30),
                                                              "b": SimpleNamespace(cpu_usage=95)})
    assert generator_cpu(runner) == 95.0
