"""Benchmark one shape on the GPU: operands beyond L2, every competitor checked then timed (both timings,
interleaved). Returns the plain record of tuner.results."""
from __future__ import annotations

import itertools
import statistics

from tuner import competitors as comp
from tuner.correctness import CheckResult, NotCapturable, check, reference, replayed
from tuner.inputs import copies_needed, device_l2_bytes, make_operands
from tuner.results import competitor_record, shape_record
from tuner.shapes import Shape
from tuner.timing import CallSampler, GraphSampler, order_rng, poisson_idle, run_interleaved

AUTOTUNE_SAMPLES = 5


def evaluate_shape(
    shape: Shape, acc: str, *, warmup_seconds: float, benchmark_seconds: float, timings=("kernel", "call"),
    target_qps: float | None = None, b_layout: str = "col", baseline_names=comp.BASELINES, ours: str = "dispatcher",
    seed: int = 0, dispatcher=None, extra: list | None = None, call_burst: int = 1,
) -> dict:
    """`ours`: "dispatcher" (the service path), "none", or a variant name from the kernel library."""
    import torch

    device = torch.device("cuda", torch.cuda.current_device())
    sync = torch.cuda.synchronize
    m, n, k = shape
    copies = copies_needed(m, n, k, device_l2_bytes(device))
    ops = make_operands(m, n, k, copies, device=device, seed=seed)
    ref = reference(ops.a[0], ops.b_row[0])

    def argsets(c: comp.Competitor):
        return [(ops.a[i], ops.b(i, c.b_layout), ops.out[i]) for i in range(copies)]

    def run_check(c: comp.Competitor, captured: bool = False) -> CheckResult:
        fn = replayed(c.fn) if captured else c.fn
        return check(fn, c.b_layout, acc, ops.a[0], ops.b_row[0], ops.b_col[0], ops.out[0], ref=ref, sync=sync)

    def checked(c: comp.Competitor) -> CheckResult:
        """Eagerly, and as kernel-only timing replays it (a captured call may run another kernel)."""
        eager = run_check(c)
        if not eager.ok or "kernel" not in timings:
            return eager
        graph = run_check(c, captured=True)
        if graph.ok or graph.reason.startswith(NotCapturable.__name__):  # not capturable: timed eagerly, as checked
            return eager
        return CheckResult(False, graph.rel_err, graph.zero_one_err, f"replayed from a CUDA graph: {graph.reason}")

    def judge(c: comp.Competitor) -> float | None:  # cuBLASLt autotuning: correct first, then kernel-only time
        if not run_check(c).ok:
            return None
        try:
            sampler = GraphSampler(c.fn, argsets(c))
            return statistics.median(sampler() for _ in range(AUTOTUNE_SAMPLES))
        except Exception:  # noqa: BLE001 - an algorithm that fails to launch is skipped like a wrong one
            return None

    made, failed = [], {}
    builders = [("ours", lambda: _ours(ours, m, n, k, b_layout, acc, dispatcher))] if ours != "none" else []
    builders += [(name, lambda name=name: comp.baselines(acc, m, n, k, judge, names=(name,))[0])
                 for name in baseline_names]
    for label, build in builders:
        try:
            made.append(build())
        except Exception as exc:  # noqa: BLE001 - a competitor that cannot be built is reported, not fatal
            failed[label if label != "ours" else comp.OURS] = f"{type(exc).__name__}: {exc}"
    made += list(extra or [])

    checks = {c.name: checked(c) for c in made}
    counter = itertools.count()
    samplers = {}
    for c in made:
        if checks[c.name].ok:
            samplers[c.name] = {}
            if "kernel" in timings:
                samplers[c.name]["kernel"] = GraphSampler(c.fn, argsets(c))
            if "call" in timings:
                samplers[c.name]["call"] = CallSampler(c.fn, argsets(c), sync, counter, call_burst)
    rng = order_rng(seed, shape.mnk)
    idle = poisson_idle(target_qps, rng) if target_qps else None
    samples = run_interleaved(samplers, warmup_seconds, benchmark_seconds, idle=idle, rng=rng)

    records = {}
    for c in made:
        s = samples.get(c.name)
        medians = {t: s.median(t) for t in timings} if s else {}
        info = dict(c.info, b_layout=c.b_layout, copies=copies)
        if s:
            info.update({f"{t}_samples": len(getattr(s, t)) for t in timings})
            if set(timings) == {"kernel", "call"}:  # per call after a graph replay (cold host) and after a call (warm)
                info["call_us_after"] = {before: s.median("call", before) for before in ("kernel", "call")}
            if "kernel" in samplers[c.name]:
                info["kernel_method"] = samplers[c.name]["kernel"].method
                if samplers[c.name]["kernel"].capture_error:
                    info["capture_error"] = samplers[c.name]["kernel"].capture_error
        records[c.name] = competitor_record(shape, checks[c.name], medians, info)
    for name, reason in failed.items():
        records[name] = competitor_record(shape, CheckResult(False, reason=reason), {})
    del ops, ref, samplers
    torch.cuda.empty_cache()
    return shape_record(shape, records)


def _ours(ours: str, m: int, n: int, k: int, b_layout: str, acc: str, dispatcher):
    if ours == "dispatcher":
        return comp.ours_dispatcher(m, n, k, b_layout, acc, dispatcher)
    from kernels import space

    by_name = {c.name: c for c in space.enumerate(arch="sm90", acc=acc, b_layout=b_layout)}
    if ours not in by_name:
        raise ValueError(f"unknown variant {ours!r}")
    return comp.ours_variant(by_name[ours], b_layout)
