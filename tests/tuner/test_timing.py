"""Timing logic without a GPU: interleaving, warm-up, Poisson idle gaps, operand rotation, copies beyond L2."""
import itertools
import random
import statistics

import pytest
import torch

from tuner.inputs import copies_needed, make_operands
from tuner.timing import CallSampler, launches_for, poisson_idle, run_interleaved


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_copies_exceed_twice_l2():
    l2 = 60 * 2**20
    n = copies_needed(64, 4096, 64, l2)
    set_bytes = 2 * (64 * 64 + 64 * 4096 + 64 * 4096)
    assert n * set_bytes >= 2 * l2 and (n - 1) * set_bytes < 2 * l2
    assert copies_needed(16384, 16384, 16384, l2) == 1
    assert copies_needed(1, 1, 1, l2) == 4096  # capped


def test_launches_cover_all_copies_and_a_useful_replay_length():
    assert launches_for(10, estimate_us=1000.0) == 10
    assert launches_for(2, estimate_us=1.0, target_us=2000.0) == 2000
    assert launches_for(1, estimate_us=0.001, max_launches=8192) == 8192


def test_rounds_interleave_competitors_in_random_orders_and_discard_warmup():
    clock, order = FakeClock(), []

    def sampler(name, timing, us):
        def run():
            order.append((name, timing))
            clock.t += 0.01
            return us
        return run

    samplers = {c: {"kernel": sampler(c, "kernel", 1.0 + i), "call": sampler(c, "call", 10.0 + i)}
                for i, c in enumerate("abc")}
    res = run_interleaved(samplers, warmup_seconds=0.05, benchmark_seconds=0.3, rng=random.Random(0), clock=clock,
                          sleep=lambda s: None)
    rounds = [order[i:i + 6] for i in range(0, len(order), 6)]
    assert all(sorted(r) == sorted((c, t) for c in "abc" for t in ("kernel", "call")) for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # the order changes between rounds
    warm = len(rounds) - len(res["a"].kernel)
    assert warm >= 1 and len(res["a"].kernel) >= 3
    assert res["b"].median("kernel") == 2.0 and res["c"].median("call") == 12.0


def test_each_call_sample_records_what_ran_before_it_and_medians_split_by_that():
    """A call sample after a graph replay (cold host) and one after another call (warm) are told apart: here a call
    after a kernel costs 100 µs more, and the split medians recover both figures from one run."""
    order, last = [], ["start"]

    def sampler(name, timing):
        def run():
            cold = timing == "call" and last[0] == "kernel"
            order.append((name, timing))
            last[0] = timing
            return 1.0 if timing == "kernel" else (110.0 if cold else 10.0)
        return run

    samplers = {c: {"kernel": sampler(c, "kernel"), "call": sampler(c, "call")} for c in "ab"}
    res = run_interleaved(samplers, 0.0, 0.0, rng=random.Random(3), min_rounds=60, max_rounds=60,
                          sleep=lambda s: None)
    for c in "ab":
        s = res[c]
        assert len(s.call_after) == len(s.call) == 60
        assert set(s.call_after) == {"kernel", "call"}
        assert s.median("call", "kernel") == 110.0 and s.median("call", "call") == 10.0
        expected = [order[i - 1][1] for i, pair in enumerate(order) if pair == (c, "call") and i >= 4]
        assert s.call_after == expected  # the warm-up round's 4 visits are not recorded
    assert res["a"].median("call", "nothing") is None


def test_each_shape_gets_its_own_interleaving_order_and_a_rerun_the_same():
    from tuner.timing import order_rng

    def orders(key, rounds=12):
        rng, pairs = order_rng(0, key), [(name, t) for name in ("ours", "ours[b]", "torch.matmul")
                                         for t in ("kernel", "call")]
        out = []
        for _ in range(rounds):
            rng.shuffle(pairs)
            out.append(tuple(pairs))
        return out

    assert orders("64_64_64") == orders("64_64_64")                  # deterministic
    assert orders("64_64_64") != orders("64_64_128")                 # but not one sequence for every shape
    assert order_rng(1, "64_64_64").random() != order_rng(0, "64_64_64").random()
    # over many shapes, which sample precedes ours' call sample is spread, not fixed
    before = {orders(f"{m}_64_64", rounds=1)[0].index(("ours", "call")) for m in range(64, 64 * 40, 64)}
    assert len(before) >= 4


def test_server_mode_idles_before_every_sample_with_poisson_gaps():
    gaps = []
    samplers = {"a": {"call": lambda: 1.0}, "b": {"call": lambda: 2.0}}
    idle = poisson_idle(100.0, random.Random(1))
    run_interleaved(samplers, 0.0, 0.0, idle=idle, min_rounds=200, max_rounds=201, sleep=gaps.append)
    assert len(gaps) == 2 * 201  # warm-up round + 200 measured rounds, one gap per sample
    assert statistics.mean(gaps) == pytest.approx(0.01, rel=0.15)
    with pytest.raises(ValueError):
        poisson_idle(0, random.Random())


def test_call_samples_rotate_over_operand_copies_shared_by_all_competitors():
    used = []
    counter = itertools.count()
    argsets = [(i,) for i in range(3)]
    s1 = CallSampler(lambda x: used.append(("s1", x)), argsets, lambda: None, counter)
    s2 = CallSampler(lambda x: used.append(("s2", x)), argsets, lambda: None, counter)
    for _ in range(3):
        assert s1() >= 0 and s2() >= 0
    assert [x for _, x in used] == [0, 1, 2, 0, 1, 2]


def test_operands_are_random_normal_and_both_b_layouts_hold_the_same_values():
    ops = make_operands(8, 16, 32, copies=2, device="cpu", seed=3)
    assert ops.copies == 2 and ops.a[0].shape == (8, 32) and ops.b_col[1].shape == (16, 32)
    assert (ops.b_col[0] == ops.b_row[0].t()).all()
    assert not (ops.a[0] == ops.a[1]).all() and float(ops.a[0].float().std()) > 0.5


def test_operand_copies_share_one_allocation_but_start_256_bytes_apart_like_fresh_tensors():
    ops = make_operands(3, 5, 7, copies=4, device="cpu", seed=1)
    for copies in (ops.a, ops.b_row, ops.b_col, ops.out):
        assert all(t.is_contiguous() for t in copies)
        assert [(t.data_ptr() - copies[0].data_ptr()) % 256 for t in copies] == [0, 0, 0, 0]
        assert len({t.data_ptr() for t in copies}) == 4
    assert all(torch.equal(ops.b_col[i], ops.b_row[i].t()) for i in range(4))
    assert not torch.equal(ops.a[0], ops.a[1]) and all(t.abs().sum() > 0 for t in ops.a)


def test_a_call_burst_sample_is_the_median_of_calls_in_a_row():
    counter = itertools.count()
    argsets = [(i,) for i in range(5)]
    used = []
    sampler = CallSampler(lambda x: used.append(x), argsets, lambda: None, counter, burst=4)
    assert sampler() >= 0
    assert used == [0, 1, 2, 3] and next(counter) == 4
    with pytest.raises(ValueError):
        CallSampler(lambda x: None, argsets, lambda: None, counter, burst=0)


def test_host_probe_times_the_op_between_two_syncs():
    import time

    from tuner.timing import host_probe

    syncs = []
    got = host_probe(lambda: syncs.append(1), lambda: time.sleep(0.002), samples=5)
    assert set(got) == {"sync_only", "tiny_op"}
    assert got["tiny_op"] >= 2000 > got["sync_only"] >= 0
    assert len(syncs) == 2 * 2 * 5  # every sample between two syncs, for both figures


class _FakeCuda:
    """Just enough of torch.cuda for GraphSampler on a CPU: streams, events (1 ms apart), and a graph capture that
    fails the way an invalidated capture does when `capture_fails` is set."""

    def __init__(self, capture_fails: bool):
        self.capture_fails, self.captured = capture_fails, 0
        fake = self

        class Stream:
            def wait_stream(self, other):
                pass

        class Event:
            def __init__(self, enable_timing=False):
                self.t = 0.0

            def record(self):
                self.t = len(fake.calls)

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return float(other.t - self.t)

        class CUDAGraph:
            def replay(self):
                pass

        class graph:
            def __init__(self, g):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                if fake.capture_fails:
                    raise RuntimeError("CUDA error: operation failed due to a previous error during capture")
                fake.captured += 1

        self.Stream, self.Event, self.CUDAGraph, self.graph = Stream, Event, CUDAGraph, graph
        self.calls: list = []

    def current_stream(self):
        return self.Stream()

    def stream(self, s):
        import contextlib
        return contextlib.nullcontext()

    def synchronize(self):
        pass


@pytest.mark.parametrize("capture_fails", [False, True])
def test_graph_sampler_says_how_it_timed_and_why_a_capture_failed(monkeypatch, capture_fails):
    import types

    from tuner.timing import GraphSampler

    cuda = _FakeCuda(capture_fails)
    monkeypatch.setitem(__import__("sys").modules, "torch", types.SimpleNamespace(cuda=cuda))
    sampler = GraphSampler(lambda *args: cuda.calls.append(args), [(1,), (2,)], launches=4)
    if capture_fails:  # eager launches timed with events instead, and the reason kept for the record
        assert (sampler.method, cuda.captured) == ("events", 0)
        assert sampler.capture_error.startswith("RuntimeError: CUDA error: operation failed due to a previous error")
        before = len(cuda.calls)
        assert sampler() == pytest.approx(1e3)  # 4 launches, 1 "ms" apart each, per launch in µs
        assert len(cuda.calls) == before + 4
    else:
        assert (sampler.method, sampler.capture_error, cuda.captured) == ("graph", None, 1)
