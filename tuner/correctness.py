"""Correctness before timing, for every competitor (baselines too) on the very operands it is timed on.

Three checks; a competitor failing any of them is reported with the reason and not timed:
  1. random-normal: relative Frobenius error ||C - C64|| / ||C64|| against an fp64 reference of the same operands;
  2. zero-one: operands of 0s and 1s, whose products are small integers (exact in fp16 up to 2048), so a wrong
     index, a missing K tile or a transposed B shows up as a large error, not as noise;
  3. NaN poisoning: the output is filled with NaN before each run, so a kernel that returns without writing C (an
     invalid cuBLASLt descriptor, a failed launch whose status was ignored) leaves NaNs and fails instead of
     looking infinitely fast.

A competitor that kernel-only timing replays from a CUDA graph is also checked that way (`replayed`): the dispatcher
may run another kernel for captured calls than for eager ones (kernels/dispatch.py), and what is timed is checked.

Tolerances (relative Frobenius error):
  fp32 accumulation: 1e-3 — the fp16 rounding of C alone is ~2.4e-4 (half an ulp of 2^-11, rms);
  fp16 accumulation: 4 * 2^-12 * sqrt(K/16), at least 2e-3 — partial sums are rounded to fp16 about once per
  16-deep MMA step, and those rounding errors add up like a random walk over the K/16 steps."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


def tolerance(acc: str, k: int) -> float:
    if acc == "f32":
        return 1e-3
    if acc == "f16":
        return max(2e-3, 4 * 2.0**-12 * math.sqrt(max(k, 16) / 16))
    raise ValueError(f"acc must be 'f32' or 'f16', got {acc!r}")


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    rel_err: float | None = None  # random-normal relative Frobenius error
    zero_one_err: float | None = None
    reason: str | None = None  # why it failed (None when ok)


def relative_frobenius(c, reference) -> float:
    """||c - ref||_F / ||ref||_F in fp64; inf when c has non-finite values (NaN poison left behind)."""
    import torch

    c64 = c.to(torch.float64)
    if not bool(torch.isfinite(c64).all()):
        return math.inf
    denom = torch.linalg.norm(reference)
    return float(torch.linalg.norm(c64 - reference) / denom) if float(denom) > 0 else float(torch.linalg.norm(c64))


def reference(a, b_row):
    """fp64 product on the operands' device (exact for fp16 inputs up to fp64 rounding)."""
    import torch

    return a.to(torch.float64) @ b_row.to(torch.float64)


class NotCapturable(RuntimeError):
    """The competitor cannot be captured into a CUDA graph (the timing then replays eager launches instead)."""


def replayed(fn: Callable) -> Callable:
    """fn(a, b, out) as kernel-only timing runs it: captured into a CUDA graph, then replayed once."""
    import torch

    def run(a, b, out):
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                fn(a, b, out)
        except Exception as exc:
            raise NotCapturable(f"{type(exc).__name__}: {exc}") from exc
        graph.replay()
        return out
    return run


def _run_poisoned(fn: Callable, a, b, out, sync: Callable[[], None]):
    out.fill_(float("nan"))
    sync()
    fn(a, b, out)
    sync()
    return out


def zero_one_operands(m: int, n: int, k: int, device, seed: int = 1):
    """0/1 operands with ~1/4 ones so dot products stay small integers; never all zeros."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)
    a = (torch.rand(m, k, generator=gen, device=device) < 0.25).to(torch.float16)
    b = (torch.rand(k, n, generator=gen, device=device) < 0.25).to(torch.float16)
    a[0, 0] = b[0, 0] = 1.0  # never a zero matrix, even for 1×1×1
    return a, b


def check(
    fn: Callable,
    b_layout: str,
    acc: str,
    a,
    b_row,
    b_col,
    out,
    *,
    ref=None,
    sync: Callable[[], None] = lambda: None,
) -> CheckResult:
    """Run `fn(a, b, out)` (b in the competitor's layout) on the given operands and on zero-one operands.
    Exceptions raised by the competitor are failures too (reported, not timed)."""
    m, k = a.shape
    n = b_row.shape[1]
    tol = tolerance(acc, k)
    try:
        ref = reference(a, b_row) if ref is None else ref
        c = _run_poisoned(fn, a, b_row if b_layout == "row" else b_col, out, sync)
        err = relative_frobenius(c, ref)
        if not err <= tol:
            return CheckResult(False, err, None, f"random-normal rel err {err:.3g} > {tol:.3g}")
        za, zb = zero_one_operands(m, n, k, a.device)
        zout = out.new_empty((m, n))
        zc = _run_poisoned(fn, za, zb if b_layout == "row" else zb.t().contiguous(), zout, sync)
        zerr = relative_frobenius(zc, reference(za, zb))
        if not zerr <= tol:
            return CheckResult(False, err, zerr, f"zero-one rel err {zerr:.3g} > {tol:.3g}")
        return CheckResult(True, err, zerr)
    except Exception as exc:  # noqa: BLE001 - a crashing competitor is a reported failure, not a crashed run
        return CheckResult(False, None, None, f"{type(exc).__name__}: {exc}")
