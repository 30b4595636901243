"""The target-rate ramp: which step is active when, how each request is tagged with its step, and what Locust
measured for each step.

Locust users are closed loop. Each user is paced at a constant `user_rate` requests per second, so the offered load
is users × user_rate as long as a user's requests take less than 1/user_rate seconds. With user_rate = 10/s that
holds up to 100 ms per request, twice the 50 ms SLO: users stop keeping pace only after the SLO is already broken.

Per-step numbers are exact in local and distributed mode (`--processes N`): every process that runs users computes,
from the same deterministic plan and its own test-start time, which step a request is *sent* in, and names the request
after it ("resident 64x4096x64 step 03 @500qps", or "... step 03 warmup" inside the step's warm-up). Locust then
counts, times and merges the requests of each name across workers itself; snapshots of running totals at step edges
would misattribute requests, because workers report to the master only every few seconds.
"""
from __future__ import annotations

import csv
import math
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

TICK_S = 1.0    # Locust calls LoadTestShape.tick() about once a second: a new step's users start up to 1 s late
SPAWN_S = 1.0   # the ramp spawns a step's new users at `users` per second: all of them within 1 s
# After the last step its users keep running this long, so that its last requests complete and a worker's periodic
# report (every 3 s) carries them to the master before it stops: Locust's own _stats.csv then has them too.
DRAIN_S = 4.0
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

    @property
    def label(self) -> str:
        """The suffix of the names of the requests sent in the measured part of this step."""
        return f"step {self.index:02d} @{self.target_qps:g}qps"

    @property
    def warmup_label(self) -> str:
        return f"step {self.index:02d} warmup"

    @property
    def measured_s(self) -> float:
        return self.end_s - self.start_s - self.warmup_s


def plan_steps(start_qps: float, stop_qps: float, step_qps: float, step_s: float, user_rate: float,
               warmup_s: float, targets: Sequence[float] = ()) -> list[Step]:
    """Targets start, start+step, ... up to stop (inclusive), or the given `targets` in order (to hit chosen points,
    e.g. 50, 500 and 2000 QPS, in one ramp); each rounded up to a whole number of users."""
    if not targets:
        if min(start_qps, step_qps) <= 0 or stop_qps < start_qps:
            raise ValueError(f"bad ramp: start={start_qps} stop={stop_qps} step={step_qps}")
        count = int(math.floor((stop_qps - start_qps) / step_qps + 1e-9)) + 1
        targets = [start_qps + index * step_qps for index in range(count)]
    if min(targets) <= 0 or min(step_s, user_rate) <= 0:
        raise ValueError(f"bad ramp: targets={list(targets)} duration={step_s} user_rate={user_rate}")
    if not TICK_S + SPAWN_S <= warmup_s < step_s - TICK_S:
        raise ValueError(f"warm-up {warmup_s} s: it must cover the shape's tick and the spawn "
                         f"(>= {TICK_S + SPAWN_S:g} s) and leave a measurement window in a {step_s} s step")
    steps = []
    for index, target in enumerate(targets):
        users = math.ceil(target / user_rate - 1e-9)
        steps.append(Step(index, users * user_rate, users, index * step_s, (index + 1) * step_s, warmup_s))
    return steps


def parse_targets(text: str) -> list[float]:
    """"50,500,2000" or "50 500 2000" -> [50.0, 500.0, 2000.0]; "" -> [] (the start/stop/step ramp)."""
    try:
        return [float(part) for part in re.split(r"[,\s]+", text) if part]
    except ValueError:
        raise ValueError(f"bad ramp targets {text!r}: want QPS separated by commas or spaces, e.g. 50,500,2000") \
            from None


def step_at(steps: list[Step], run_time: float) -> Step | None:
    for step in steps:
        if step.start_s <= run_time < step.end_s:
            return step
    return None


def request_name(base: str, steps: list[Step], run_time: float) -> str:
    """The name a request sent at `run_time` gets: its step's label, the step's warm-up label, or 'drain'."""
    step = step_at(steps, run_time)
    if step is None:
        return f"{base} drain"
    if run_time < step.start_s + step.warmup_s:
        return f"{base} {step.warmup_label}"
    return f"{base} {step.label}"


class RampClock:
    """The ramp's run time on this process. Started by the test_start event, which fires on the local runner and on
    the master and every worker when they get the test's first spawn message (milliseconds apart)."""

    def __init__(self):
        self.steps: list[Step] = []
        self.started_unix = math.nan
        self._started = None

    def start(self, steps: list[Step]) -> None:
        self.steps = steps
        self._started = time.perf_counter()
        self.started_unix = time.time()

    def name(self, base: str) -> str:
        if self._started is None:          # a request before the test started (never in a ramp)
            return f"{base} drain"
        return request_name(base, self.steps, time.perf_counter() - self._started)


@dataclass
class StepStats:
    """One row of <csv prefix>_steps.csv: the ramp step and what Locust recorded for the requests sent inside its
    measurement window (from start_s + warmup to end_s)."""
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


def step_rows(steps: list[Step], user_rate: float, stats, started_unix: float,
              cpu: dict[int, float]) -> list[StepStats]:
    """Per-step rows from Locust's final RequestStats (on the master: merged from every worker): a step's numbers are
    those of the entries whose names end with its label, merged (the mixed scenario has several per step)."""
    from locust.stats import StatsEntry   # Locust patches the interpreter on import: not at module level

    rows = []
    for step in steps:
        merged = StatsEntry(stats, step.label, "", use_response_times_cache=False)
        for entry in stats.entries.values():
            if entry.name.endswith(f" {step.label}"):
                merged.extend(entry)
        count = merged.num_requests

        def pct(q: float) -> float:
            return float(merged.get_response_time_percentile(q)) if count else math.nan

        start = started_unix + step.start_s + step.warmup_s
        rows.append(StepStats(step.index, step.target_qps, step.users, user_rate, step.start_s, step.end_s, start,
                              start + step.measured_s, count, merged.num_failures, pct(0.50), pct(0.95), pct(0.99),
                              merged.avg_response_time if count else math.nan,
                              float(merged.max_response_time) if count else math.nan, cpu.get(step.index, 0.0)))
    return rows


def generator_cpu(runner) -> float:
    """CPU % of the busiest Locust process: the local runner, or the master and each worker in distributed mode."""
    busiest = float(getattr(runner, "current_cpu_usage", 0.0) or 0.0)
    for worker in getattr(runner, "clients", {}).values():
        busiest = max(busiest, float(getattr(worker, "cpu_usage", 0.0) or 0.0))
    return busiest
