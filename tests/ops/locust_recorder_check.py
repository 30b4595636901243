"""Run by test_loadtest_report.py in a child process: Locust monkey-patches the interpreter (gevent) on import, which
must not happen inside the pytest process. Feeds Locust's real RequestStats through the ramp's StepRecorder."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from locust.stats import RequestStats  # noqa: E402

from loadtest._ramp import Step, StepRecorder  # noqa: E402


def check_recorder() -> None:
    stats = RequestStats()
    runner = SimpleNamespace(stats=stats, current_cpu_usage=12.0, clients={})
    step = Step(0, 10.0, 1, 0.0, 10.0, 2.0)
    recorder = StepRecorder(user_rate=10.0)
    for ms in (500, 600):                                   # warm-up: must not count
        stats.log_request("POST", "x", ms, 10)
    assert not recorder.observe(runner, step, 1.0)          # still warming up: nothing measured
    assert not recorder.observe(runner, step, 2.5)          # window opens
    for ms in range(1, 101):                                # 1..100 ms, one failure
        stats.log_request("POST", "x", ms, 10)
    stats.log_error("POST", "x", "boom")
    runner.current_cpu_usage = 55.0
    assert not recorder.observe(runner, step, 5.0)
    assert recorder.observe(runner, step, 9.2)              # last tick inside the step closes the window
    row = recorder.rows[0]
    assert (row.requests, row.failures) == (100, 1)
    # Locust's percentile: the smallest t with fewer than n·(1-q) requests slower than t, i.e. rank floor(n·q)+1
    # of 1..100 ms: 51, 96, 100. The warm-up's 500 and 600 ms must not appear.
    assert (row.p50_ms, row.p95_ms, row.p99_ms, row.max_ms) == (51, 96, 100, 100), row
    assert row.avg_ms == 50.5
    assert row.generator_cpu_percent == 55.0
    assert not recorder.observe(runner, step, 9.8) and len(recorder.rows) == 1   # a step is recorded once


if __name__ == "__main__":
    check_recorder()
    print("recorder checks passed")
