"""Locust scenarios for the HGEMM service and the target-rate ramp. Run (headless, from the repo root):

    locust -f loadtest/ --headless --host http://127.0.0.1:8000 --csv out/binary --scenario binary

Scenarios (`--scenario`): small_json, binary (64×4096×64 by default, `--shape`), resident (B registered once, only A
sent), mixed (LLM-like: four resident weight matrices, M drawn from a decode/prefill mix). The ramp offers
`--ramp-start` .. `--ramp-stop` QPS in steps of `--ramp-step`, `--step-duration` seconds each; every user is paced at
`--user-rate` requests/s. Every request is named after the ramp step it is sent in (loadtest/_ramp.py), so Locust's
own per-name statistics, merged across workers with `--processes N`, are exact per step; when the test ends they go to
`<csv prefix>_steps.csv`, which `python -m loadtest.report` reads with Locust's `<csv prefix>_stats_history.csv`.
Every option also reads LOCUST_<NAME> from the environment.
"""
from __future__ import annotations

import json
import logging
import random
import sys
import urllib.request
from pathlib import Path

import gevent
import gevent.lock
from locust import FastHttpUser, LoadTestShape, events, task
from locust.runners import WorkerRunner
from locust.user.wait_time import constant_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `loadtest.*` helpers, wherever locust runs from
from loadtest._payloads import (LLM_WEIGHTS, MixedShapes, binary_body, binary_query, operand_request,  # noqa: E402
                                parse_shape, small_json_body)
from loadtest._ramp import (DRAIN_S, RampClock, generator_cpu, parse_targets, plan_steps, step_at,  # noqa: E402
                            step_rows, write_steps)

log = logging.getLogger("loadtest")


# geventhttpclient reads a response body in recv() calls of its block size, 4 KiB by default: 128 Python-level reads
# and parser feeds for one 512 KiB C. Measured on the CPU box against a bare asyncio server: 1.16 ms per 512 KiB
# response with 4 KiB blocks, 0.48 ms with 256 KiB — generator time that Locust would report as service latency.
RESPONSE_BLOCK_BYTES = 256 * 1024


@events.init_command_line_parser.add_listener
def _options(parser):
    group = parser.add_argument_group("HGEMM ramp")
    group.add_argument("--scenario", choices=sorted(SCENARIOS), default="binary", env_var="LOCUST_SCENARIO",
                       help="which scenario to run")
    group.add_argument("--shape", default="64x4096x64", env_var="LOCUST_SHAPE",
                       help="MxNxK of the binary and resident scenarios")
    group.add_argument("--ramp-start", type=float, default=50, env_var="LOCUST_RAMP_START", help="first target QPS")
    group.add_argument("--ramp-stop", type=float, default=500, env_var="LOCUST_RAMP_STOP", help="last target QPS")
    group.add_argument("--ramp-step", type=float, default=50, env_var="LOCUST_RAMP_STEP", help="QPS added per step")
    group.add_argument("--ramp-targets", default="", env_var="LOCUST_RAMP_TARGETS",
                       help="comma-separated target QPS per step (e.g. 50,500,1000,2000); overrides start/stop/step")
    group.add_argument("--step-duration", type=float, default=30, env_var="LOCUST_STEP_DURATION",
                       help="seconds per step")
    group.add_argument("--step-warmup", type=float, default=5, env_var="LOCUST_STEP_WARMUP",
                       help="seconds at the start of each step left out of its numbers")
    group.add_argument("--user-rate", type=float, default=10, env_var="LOCUST_USER_RATE",
                       help="requests/s per user: users = target / user-rate (keep 1/user-rate >= 2 x the SLO)")
    group.add_argument("--api-key", default="", env_var="LOCUST_API_KEY", help="bearer token if the service has auth")
    group.add_argument("--response-block", type=int, default=RESPONSE_BLOCK_BYTES, env_var="LOCUST_RESPONSE_BLOCK",
                       help="bytes per socket read of a response (geventhttpclient's own default: 4096)")


def _auth(environment) -> dict[str, str]:
    key = environment.parsed_options.api_key
    return {"Authorization": f"Bearer {key}"} if key else {}


class _Operands:
    """Resident operands registered once per Locust process, shared by its users, deleted when the test stops.
    Registration is set-up, not load: it goes through urllib so it stays out of Locust's statistics."""
    ids: dict[str, str] = {}
    lock = gevent.lock.Semaphore()

    @classmethod
    def ensure(cls, environment, key: str, request_factory) -> str:
        with cls.lock:
            if key not in cls.ids:
                path, body = request_factory()
                request = urllib.request.Request(f"{environment.host}{path}", data=body, method="POST", headers={
                    "Content-Type": "application/octet-stream", **_auth(environment)})
                with urllib.request.urlopen(request, timeout=120) as response:
                    cls.ids[key] = json.load(response)["id"]
                log.info("registered operand %s as %s", key, cls.ids[key])
            return cls.ids[key]

    @classmethod
    def delete_all(cls, environment) -> None:
        for key, operand_id in list(cls.ids.items()):
            request = urllib.request.Request(f"{environment.host}/v1/operands/{operand_id}", method="DELETE",
                                             headers=_auth(environment))
            try:
                urllib.request.urlopen(request, timeout=10).close()
            except OSError as error:
                log.warning("could not delete operand %s (%s): %s", key, operand_id, error)
            del cls.ids[key]


@events.test_stop.add_listener
def _cleanup(environment, **_):
    _Operands.delete_all(environment)


def _plan(options):
    return plan_steps(options.ramp_start, options.ramp_stop, options.ramp_step, options.step_duration,
                      options.user_rate, options.step_warmup, parse_targets(options.ramp_targets))


_clock = RampClock()   # this process's ramp time: names every request after its step


@events.test_start.add_listener
def _start_clock(environment, **_):
    _clock.start(_plan(environment.parsed_options))


_environments = []


@events.init.add_listener
def _remember(environment, **_):
    _environments.append(environment)


@events.quit.add_listener
def _write_step_rows(**_):
    """After the runner quit: on the master, every worker's final report has been merged into runner.stats."""
    for environment in _environments:
        shape = environment.shape_class
        if isinstance(environment.runner, WorkerRunner) or not isinstance(shape, RateRampShape) or not shape.steps:
            continue
        prefix = getattr(environment.parsed_options, "csv_prefix", None)
        done = [s for s in shape.steps if s.end_s <= shape.last_run_time]   # an interrupted run: completed steps
        rows = step_rows(done, environment.parsed_options.user_rate, environment.runner.stats, _clock.started_unix,
                         shape.cpu)
        for row in rows:
            log.info("step %d: target %g QPS, achieved %.1f QPS, p99 %.0f ms, %d failures, generator CPU %.0f%%",
                     row.step, row.target_qps, row.requests / row.seconds, row.p99_ms, row.failures,
                     row.generator_cpu_percent)
        if prefix:
            write_steps(f"{prefix}_steps.csv", rows)




class HgemmUser(FastHttpUser):
    """Paced at --user-rate requests/s (constant throughput); starts at a random phase so users do not fire in
    lock-step. The scenarios below are concrete classes (Locust falls back to importing the directory as pytest files
    when it finds none), but only the --scenario one is spawned: RateRampShape names it. Request names carry the
    ramp step the request is sent in (`step_name`)."""
    abstract = True

    def __init__(self, environment) -> None:
        super().__init__(environment)
        # the session's client pool makes its HTTPClient on the first request, with these arguments
        pool = getattr(self.client.client, "clientpool", None)
        if pool is not None and isinstance(getattr(pool, "client_args", None), dict):
            options = environment.parsed_options
            pool.client_args.setdefault("block_size", options.response_block if options else RESPONSE_BLOCK_BYTES)

    @staticmethod
    def step_name(base: str) -> str:
        return _clock.name(base)

    def wait_time(self) -> float:
        return constant_throughput(self.environment.parsed_options.user_rate)(self)

    def on_start(self) -> None:
        gevent.sleep(random.uniform(0, 1.0 / self.environment.parsed_options.user_rate))

    def post_binary(self, path: str, body: bytes, expected_bytes: int, name: str) -> None:
        headers = {"Content-Type": "application/octet-stream", **_auth(self.environment)}
        with self.client.post(path, data=body, headers=headers, name=name, catch_response=True) as response:
            if response.status_code == 200 and len(response.content or b"") != expected_bytes:
                response.failure(f"C has {len(response.content or b'')} bytes, expected {expected_bytes}")


class SmallJsonUser(HgemmUser):
    """8×8×8 as nested JSON lists: the slow, convenient path."""
    body = small_json_body()

    @task
    def hgemm_json(self) -> None:
        with self.client.post("/v1/hgemm", json=self.body, headers=_auth(self.environment),
                              name=self.step_name("json 8x8x8"), catch_response=True) as response:
            if response.status_code == 200 and response.json().get("shape") != [8, 8]:
                response.failure(f"unexpected C shape {response.json().get('shape')}")


class BinaryUser(HgemmUser):
    """A and B in the body (B N×K, the x @ Wᵀ layout), C back as raw bytes: the fast path."""

    def on_start(self) -> None:
        self.shape = parse_shape(self.environment.parsed_options.shape)
        self.body = _cached_binary_body(self.shape)
        self.path = binary_query(self.shape)
        super().on_start()

    @task
    def hgemm_binary(self) -> None:
        self.post_binary(self.path, self.body, self.shape.c_bytes, self.step_name(f"binary {self.shape.label}"))


class ResidentUser(HgemmUser):
    """B registered once (POST /v1/operands), then only A is sent: how an inference server keeps weights resident."""

    def on_start(self) -> None:
        self.shape = shape = parse_shape(self.environment.parsed_options.shape)
        operand = _Operands.ensure(self.environment, f"resident {shape.label}",
                                   lambda: operand_request(shape.n, shape.k, f"loadtest {shape.label}", seed=1))
        self.body = _cached_binary_body(shape)[:shape.m * shape.k * 2]   # A only
        self.path = binary_query(shape, operand=operand)
        super().on_start()

    @task
    def hgemm_resident(self) -> None:
        self.post_binary(self.path, self.body, self.shape.c_bytes, self.step_name(f"resident {self.shape.label}"))


class MixedLLMUser(HgemmUser):
    """A decoder layer's four weights resident; each request one projection with M tokens (decode-heavy mix)."""

    def on_start(self) -> None:
        self.operands = {
            name: _Operands.ensure(self.environment, f"llm {name}",
                                   lambda n=n, k=k, name=name: operand_request(n, k, f"loadtest llm {name}",
                                                                                  seed=n + k))
            for name, (n, k) in LLM_WEIGHTS.items()}
        self.shapes = _mixed_shapes()
        super().on_start()

    @task
    def hgemm_mixed(self) -> None:
        name, m = self.shapes.draw()
        n, k = LLM_WEIGHTS[name]
        path = f"/v1/hgemm?m={m}&operand={self.operands[name]}&acc=f32"
        # one name per step, not per (weight, M): 20 shapes × steps × warm-up would drown Locust's summary
        self.post_binary(path, self.shapes.a_bytes(m, k), m * n * 2, self.step_name("mixed"))


SCENARIOS = {"small_json": SmallJsonUser, "binary": BinaryUser, "resident": ResidentUser, "mixed": MixedLLMUser}
_binary_bodies: dict = {}
_mixed: list[MixedShapes] = []


def _cached_binary_body(shape) -> bytes:
    if shape not in _binary_bodies:
        _binary_bodies[shape] = binary_body(shape)
    return _binary_bodies[shape]


def _mixed_shapes() -> MixedShapes:
    if not _mixed:
        _mixed.append(MixedShapes())
    return _mixed[0]


class RateRampShape(LoadTestShape):
    """Ramps the offered rate step by step, then holds the last step's users for DRAIN_S so that its last requests
    complete. Records the busiest generator process's CPU per step; the per-step request numbers come from the
    request names (see `_write_step_rows`)."""
    use_common_options = False

    def __init__(self):
        super().__init__()
        self.steps = None
        self.cpu: dict[int, float] = {}
        self.short: set[int] = set()
        self.last_run_time = 0.0

    def _setup(self) -> None:
        options = self.runner.environment.parsed_options
        self.steps = _plan(options)
        if not getattr(options, "csv_prefix", None):
            log.warning("no --csv prefix: per-step numbers will not be written")
        self.user_class = SCENARIOS[options.scenario]
        log.info("ramp %s: %s", options.scenario,
                 ", ".join(f"{s.target_qps:g} QPS/{s.users} users" for s in self.steps))

    def tick(self):
        if self.steps is None:
            self._setup()
        run_time = self.last_run_time = self.get_run_time()
        step = step_at(self.steps, run_time)
        if step is not None and run_time >= step.start_s + step.warmup_s:
            self.cpu[step.index] = max(self.cpu.get(step.index, 0.0), generator_cpu(self.runner))
            if self.runner.user_count < step.users and step.index not in self.short:
                self.short.add(step.index)   # its achieved QPS will be low for the generator's sake, not the service's
                log.warning("step %d: only %d of %d users running after the %g s warm-up: raise --step-warmup",
                            step.index, self.runner.user_count, step.users, step.warmup_s)
        if step is None:
            last = self.steps[-1]
            if run_time >= last.end_s + DRAIN_S:
                return None
            step = last
        # spawn rate = users per second: a step's new users all start within SPAWN_S, inside its warm-up
        return step.users, max(step.users, 1), [self.user_class]
