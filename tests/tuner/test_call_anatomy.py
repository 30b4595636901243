"""The per-call anatomy's bookkeeping on CPU: the split at the call's return, and the warm-up's samples forgotten."""
import itertools
import random

import pytest

from tuner.call_anatomy import SplitCallSampler, measure, table


class FakeClock:
    """Each call's host part and each sync's wait advance a fake clock by known amounts."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def make_sampler(clock, host_s, wait_s, counter, seen, slower_each_call=0.0):
    calls = []

    def fn(x):
        seen.append(x)
        clock.now += host_s + slower_each_call * len(calls)
        calls.append(x)

    pending = []

    def call(*args):
        fn(*args)
        pending.append(wait_s)

    def sync():
        clock.now += sum(pending)
        pending.clear()

    return SplitCallSampler(call, [(0,), (1,), (2,)], sync, counter, clock)


def test_split_sampler_separates_host_from_wait_and_rotates_operands():
    clock, seen = FakeClock(), []
    s = make_sampler(clock, 3e-6, 7e-6, itertools.count(), seen)
    totals = [s() for _ in range(4)]
    assert totals == pytest.approx([10.0] * 4)
    assert s.host == pytest.approx([3.0] * 4) and s.wait == pytest.approx([7.0] * 4)
    assert seen == [0, 1, 2, 0]
    assert s.medians(4) == pytest.approx({"total": 10.0, "host": 3.0, "wait": 7.0, "samples": 4})


def test_measure_drops_the_warm_up_samples_and_keeps_each_competitor_apart():
    clock, seen = FakeClock(), []
    counter = itertools.count()
    fast = make_sampler(clock, 2e-6, 5e-6, counter, seen, slower_each_call=1e-6)  # host 2, 3, 4, 5 µs
    slow = make_sampler(clock, 20e-6, 5e-6, counter, seen)
    # warm-up 0 s: one round, not counted
    out = measure({"ours": {"call": fast}, "torch.matmul": {"call": slow}}, 0.0, 0.0, random.Random(0))
    assert out["ours"]["samples"] == 3 and out["torch.matmul"]["samples"] == 3  # min_rounds of run_interleaved
    assert out["ours"]["host"] == pytest.approx(4.0) and out["torch.matmul"]["host"] == pytest.approx(20.0)
    assert out["ours"]["wait"] == pytest.approx(5.0)
    assert len(seen) == 2 * (1 + 3)  # the warm-up round, then the 3 recorded rounds
    text = table([{"mnk": "64_64_64", "parts_us": out}])
    assert "64_64_64" in text and "2.78" in text  # 25 / 9
