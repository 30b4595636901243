"""The target-rate ramp: which step is active when, and what Locust measured during each step.

Locust users are closed loop. Each user is paced at a constant `user_rate` requests per second, so the offered load
is users × user_rate as long as a user's requests take less than 1/user_rate seconds. With user_rate = 10/s that
holds up to 100 ms per request, twice the 50 ms SLO: users stop keeping pace only after the SLO is already broken.
"""
from __future__ import annotations

import csv
import math
import time
from dataclasses import asdict, dataclass, fields

TICK_S = 1.0   # Locust calls LoadTestShape.tick() about once a second
STEP_COLUMNS = ("step", "target_qps", "users", "user_rate", "start_s", "end_s", "measure_start", "measure_end",
                "requests", "failures", "p50_ms", "p95_ms", "p99_ms", "avg_ms", "max_ms", "generator_cpu_percent")


@dataclass(frozen=True)
class Step:
    index: int
    target_qps: float     # users × user_rate: the load offered in this step
    users: int
    start_s: float        # run time at which the step begins
    end_s: float
    warmup_s: float       # measured only from start_s + warmup_s on (users spawning, queues filling)


def plan_steps(start_qps: float, stop_qps: float, step_qps: float, step_s: float, user_rate: float,
               warmup_s: float) -> list[Step]:
    """Targets start, start+step, ... up to stop (inclusive); each rounded up to a whole number of users."""
    if min(start_qps, step_qps, step_s, user_rate) <= 0 or stop_qps < start_qps:
        raise ValueError(f"bad ramp: start={start_qps} stop={stop_qps} step={step_qps} duration={step_s} "
                         f"user_rate={user_rate}")
    if not 0 <= warmup_s < step_s - 2 * TICK_S:
        raise ValueError(f"warm-up {warmup_s} s leaves no measurement window in a {step_s} s step")
    count = int(math.floor((stop_qps - start_qps) / step_qps + 1e-9)) + 1
    steps = []
    for index in range(count):
        users = math.ceil((start_qps + index * step_qps) / user_rate - 1e-9)
        steps.append(Step(index, users * user_rate, users, index * step_s, (index + 1) * step_s, warmup_s))
    return steps


def step_at(steps: list[Step], run_time: float) -> Step | None:
    for step in steps:
        if step.start_s <= run_time < step.end_s:
            return step
    return None


@dataclass
class StepStats:
    """One row of <csv prefix>_steps.csv: the ramp step and what Locust recorded inside its measurement window."""
    step: int
    target_qps: float
    users: int
    user_rate: float
    start_s: float
    end_s: float
    measure_start: float    # unix time
    measure_end: float
    requests: int
    failures: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    avg_ms: float
    max_ms: float
    generator_cpu_percent: float   # the busiest Locust process (master or worker) during the window

    @property
    def seconds(self) -> float:
        return self.measure_end - self.measure_start


assert tuple(f.name for f in fields(StepStats)) == STEP_COLUMNS


def write_steps(path: str, rows: list[StepStats]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=STEP_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))


def read_steps(path: str) -> list[StepStats]:
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = set(STEP_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing columns {sorted(missing)}")
        rows = []
        for raw in reader:
            values = {}
            for f in fields(StepStats):
                values[f.name] = int(float(raw[f.name])) if f.type in ("int", int) else float(raw[f.name])
            rows.append(StepStats(**values))
    return rows


class StepRecorder:
    """Snapshots Locust's aggregated stats at the start and end of each step's measurement window and turns the
    difference into exact per-step counts and percentiles (Locust's own CSV percentiles are cumulative or a
    10-second rolling window, neither of which is a step)."""

    def __init__(self, user_rate: float):
        self.user_rate = user_rate
        self.rows: list[StepStats] = []
        self._step: Step | None = None
        self._done: set[int] = set()
        self._snapshot = None
        self._cpu = 0.0

    def observe(self, runner, step: Step | None, run_time: float) -> bool:
        """Called on every shape tick (about once a second). The window closes on the last tick inside the step, so
        it never includes the next step's users. Returns True when a step's row was completed."""
        completed = False
        if self._step is not None and (step is None or step.index != self._step.index
                                       or run_time >= self._step.end_s - TICK_S):
            completed = self._finish(runner)
        if (step is not None and self._step is None and step.index not in self._done
                and step.start_s + step.warmup_s <= run_time < step.end_s - TICK_S):
            self._step, self._snapshot, self._cpu = step, _snapshot(runner), 0.0
        if self._step is not None:
            self._cpu = max(self._cpu, generator_cpu(runner))
        return completed

    def _finish(self, runner) -> bool:
        start, end = self._snapshot, _snapshot(runner)
        step, self._step = self._step, None
        self._done.add(step.index)
        self.rows.append(step_stats(step, self.user_rate, start, end, self._cpu))
        return True


def _snapshot(runner) -> tuple[float, int, int, dict[int, int], int, int]:
    total = runner.stats.total
    return (time.time(), total.num_requests, total.num_failures, dict(total.response_times),
            total.total_response_time, total.max_response_time or 0)


def step_stats(step: Step, user_rate: float, start, end, cpu: float) -> StepStats:
    from locust.stats import calculate_response_time_percentile, diff_response_time_dicts

    t0, n0, f0, times0, sum0, _ = start
    t1, n1, f1, times1, sum1, _ = end
    times = diff_response_time_dicts(times1, times0)
    count = n1 - n0

    def pct(q: float) -> float:
        return float(calculate_response_time_percentile(times, count, q)) if count else math.nan

    return StepStats(step.index, step.target_qps, step.users, user_rate, step.start_s, step.end_s, t0, t1, count,
                     f1 - f0, pct(0.50), pct(0.95), pct(0.99), (sum1 - sum0) / count if count else math.nan,
                     float(max(times)) if times else math.nan, cpu)


def generator_cpu(runner) -> float:
    """CPU % of the busiest Locust process: the local runner, or the master and each worker in distributed mode."""
    busiest = float(getattr(runner, "current_cpu_usage", 0.0) or 0.0)
    for worker in getattr(runner, "clients", {}).values():
        busiest = max(busiest, float(getattr(worker, "cpu_usage", 0.0) or 0.0))
    return busiest
