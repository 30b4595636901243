"""The two honest timings, measured side by side for every competitor in one interleaved run.

kernel-only: a CUDA graph replays `launches` calls back to back, inputs rotated over copies that together exceed L2;
             one sample = one replay timed with CUDA events / launches. What the GPU spends per GEMM.
per call:    sync, call, sync, wall clock (CUDA-L2's method): host + launch + GPU as a Python user sees it. One sample
             is one such call (burst 1: a call after the GPU and the host sat in another competitor's graph replay,
             i.e. a "cold" host path), or the median of `burst` calls in a row (a caller in a loop: "warm").

Competitors are interleaved in a fresh random order every round, because the H200 is power-limited: whoever runs
last in a long back-to-back block sees a hotter, slower chip; each shape draws its own sequence of orders
(`order_rng`). Reported value: the median of the samples."""
from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

TIMINGS = ("kernel", "call")


def call_sample_us(fn: Callable, args: tuple, sync: Callable[[], None]) -> float:
    """One per-call sample: everything between two synchronizations, in microseconds."""
    sync()
    t0 = time.perf_counter()
    fn(*args)
    sync()
    return (time.perf_counter() - t0) * 1e6


class CallSampler:
    """Per-call samples, each call on the next operand copy of a counter shared by all competitors (so the copy a
    competitor reads was last touched ≥ one L2-size of traffic ago, whoever ran before it). With burst > 1 a sample is
    the median of that many calls in a row."""

    def __init__(self, fn: Callable, argsets: Sequence[tuple], sync: Callable[[], None], counter: Iterator[int],
                 burst: int = 1):
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.fn, self.argsets, self.sync, self.counter, self.burst = fn, argsets, sync, counter, burst

    def __call__(self) -> float:
        samples = [call_sample_us(self.fn, self.argsets[next(self.counter) % len(self.argsets)], self.sync)
                   for _ in range(self.burst)]
        return statistics.median(samples)


def launches_for(copies: int, estimate_us: float, target_us: float = 2000.0, max_launches: int = 8192) -> int:
    """Launches per replay: at least one pass over all copies, and enough to make a replay ~target_us long."""
    want = max(copies, math.ceil(target_us / max(estimate_us, 1e-3)))
    return max(1, min(max_launches, want))


class GraphSampler:
    """Kernel-only samples from one captured CUDA graph of `launches` calls over rotating operand copies.
    If a competitor cannot be captured (e.g. a library that allocates on first use), it falls back to timing the
    same back-to-back eager launches with events; `.method` says which one was used."""

    def __init__(self, fn: Callable, argsets: Sequence[tuple], launches: int | None = None):
        import torch

        self.torch = torch
        self.fn, self.argsets = fn, argsets
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm up off the capture: handles, workspaces, lazy loading
            for i in range(3):
                fn(*argsets[i % len(argsets)])
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        self.launches = launches or launches_for(len(argsets), self._eager_us(min(len(argsets), 8)))
        self.graph, self.method, self.capture_error = None, "graph", None
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self._launch_all()
            self.graph = graph
        except Exception as exc:  # capture unsupported by this competitor: time eager launches instead
            torch.cuda.synchronize()
            self.method, self.capture_error = "events", f"{type(exc).__name__}: {exc}"[:500]
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def _launch_all(self) -> None:
        for i in range(self.launches):
            self.fn(*self.argsets[i % len(self.argsets)])

    def _eager_us(self, n: int) -> float:
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(n):
            self.fn(*self.argsets[i % len(self.argsets)])
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / n

    def __call__(self) -> float:
        self.start.record()
        if self.graph is not None:
            self.graph.replay()
        else:
            self._launch_all()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e3 / self.launches


@dataclass
class Samples:
    kernel: list[float] = field(default_factory=list)
    call: list[float] = field(default_factory=list)
    # what the run visited just before each call sample: "kernel" (a competitor's graph replay: the host sat idle for
    # ~2 ms, its path runs cold) or "call" (another competitor's call: a warm host, as a caller in a loop)
    call_after: list[str] = field(default_factory=list)

    def median(self, timing: str, after: str | None = None) -> float | None:
        """The median of one timing's samples; for "call", `after` keeps those that followed that timing."""
        values = getattr(self, timing)
        if after is not None:
            if timing != "call":
                raise ValueError(f"only call samples record what ran before them, not {timing!r} ones")
            values = [v for v, before in zip(values, self.call_after) if before == after]
        return statistics.median(values) if values else None


def host_probe(sync: Callable[[], None], op: Callable[[], object], samples: int = 400) -> dict[str, float]:
    """The machine's per-call floor, sampled the way per-call figures are (sync, call, sync; median µs): `sync_only`
    (nothing between the two syncs) and `tiny_op` (one small GPU op, e.g. a 1-element fill_). Per-call figures are
    comparable only on one machine: in session 23 the same torch.matmul call below 1e9 FLOP took 1.6-2x longer on
    one machine start than on another, kernel-only within 3%; a run's probe says which kind of host it had.
    (tuner.call_anatomy times the same two floors interleaved with the competitors, per shape.)"""
    def median_us(fn) -> float:
        return round(statistics.median(call_sample_us(fn, (), sync) for _ in range(samples)), 2)

    return {"sync_only": median_us(lambda: None), "tiny_op": median_us(op)}


def order_rng(seed: int, key: str) -> random.Random:
    """The random source of one shape's interleaving order: its own for every shape (key: M_N_K), the same on a rerun.
    With one seed for all shapes every shape saw the same sequence of round orders, so whatever a competitor's sample
    follows (another's graph replay or a lone call) was the same on every shape, and an order effect survived the
    grid's geomean instead of averaging out (a suspect for the per-call offset between two dispatchers with the same
    choices: 3-6% in session 22's grids)."""
    return random.Random(f"{seed}:{key}")


def run_interleaved(
    samplers: dict[str, dict[str, Callable[[], float]]],
    warmup_seconds: float,
    benchmark_seconds: float,
    *,
    idle: Callable[[], float] | None = None,
    rng: random.Random | None = None,
    min_rounds: int = 3,
    max_rounds: int = 1_000_000,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Samples]:
    """samplers: competitor name -> {timing: sampler}. Every round visits every (competitor, timing) once in a
    fresh random order; warm-up rounds run the same way for `warmup_seconds` and are discarded. `idle` (server mode)
    returns the idle gap in seconds before each sample (Poisson arrivals: exponential gaps). Each call sample also
    records which timing ran just before it (`Samples.call_after`), so one run gives per call after a graph replay
    and after a call apart."""
    rng = rng or random.Random(0)
    pairs = [(name, timing) for name, by_timing in samplers.items() for timing in by_timing]
    results = {name: Samples() for name in samplers}
    previous = "start"

    def one_round(record: bool) -> None:
        nonlocal previous
        rng.shuffle(pairs)
        for name, timing in pairs:
            if idle is not None:
                sleep(idle())
            us = samplers[name][timing]()
            if record:
                getattr(results[name], timing).append(us)
                if timing == "call":
                    results[name].call_after.append(previous)
            previous = timing

    for phase_seconds, record, least in ((warmup_seconds, False, 1), (benchmark_seconds, True, min_rounds)):
        start = clock()
        for done in itertools.count():
            if done >= max_rounds or (done >= least and clock() - start >= phase_seconds):
                break
            one_round(record)
    return results


def poisson_idle(target_qps: float, rng: random.Random) -> Callable[[], float]:
    """Exponential inter-arrival gaps of a Poisson process at `target_qps` (the GPU idles in between)."""
    if target_qps <= 0:
        raise ValueError("target_qps must be > 0")
    return lambda: rng.expovariate(target_qps)
