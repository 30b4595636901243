"""Competitors: a name and a callable `(a, b, out)` with B in the competitor's own layout.

Baselines (named as in CUDA-L2's tables so our CSVs line up with theirs):
  torch.matmul                      torch.matmul(a, b_row, out=out)
  cuBLAS-tn / cuBLAS-nn             our cublasGemmEx wrapper, B column-major (TN) / row-major (NN)
  cuBLASLt-heuristic-tn / -nn       cuBLASLt, top-1 algorithm of the heuristic
  cuBLASLt-auto-tuning-tn / -nn     cuBLASLt, every algorithm of a top-N (N >= 32) heuristic list checked and timed
                                    kernel-only on the benchmark's own operands; the fastest correct one is kept
Ours:
  ours                              the Dispatcher (tuned table -> predictor -> cuBLAS), as the service calls it
  ours:<variant>[@r<R>w<W>s<S>]     one specific built variant with explicit runtime knobs (the suffix names the
                                    non-default ones, as tuner.arms.Arm spells them: raster, swizzle, splits)

torch.matmul always accumulates in fp32 (torch has no fp16-accumulating GEMM); it is the same baseline for both
accumulators, as in CUDA-L2."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

BASELINES = (
    "torch.matmul",
    "cuBLAS-tn",
    "cuBLAS-nn",
    "cuBLASLt-heuristic-tn",
    "cuBLASLt-heuristic-nn",
    "cuBLASLt-auto-tuning-tn",
    "cuBLASLt-auto-tuning-nn",
)
# Each cuBLAS family's "-max": the stronger of its TN and NN variants, per shape (CUDA-L2's convention).
MAX_OF = {
    "cuBLAS-max": ("cuBLAS-tn", "cuBLAS-nn"),
    "cuBLASLt-heuristic-max": ("cuBLASLt-heuristic-tn", "cuBLASLt-heuristic-nn"),
    "cuBLASLt-auto-tuning-max": ("cuBLASLt-auto-tuning-tn", "cuBLASLt-auto-tuning-nn"),
}
OURS = "ours"
LT_TOP_N = 32


@dataclass
class Competitor:
    name: str
    fn: Callable  # fn(a, b, out), B in `b_layout`
    b_layout: str  # "row" (K×N) or "col" (N×K)
    role: str = "baseline"  # or "ours"
    info: dict = field(default_factory=dict)


def torch_matmul() -> Competitor:
    import torch

    return Competitor("torch.matmul", lambda a, b, out: torch.matmul(a, b, out=out), "row")


def cublas_arm(name: str, kind: str, b_layout: str, acc: str, **options) -> Competitor:
    from kernels.cublas import CublasArm

    arm = CublasArm(kind=kind, **options)
    return Competitor(name, lambda a, b, out: arm(a, b, out, b_layout=b_layout, acc=acc), b_layout, info=dict(options))


def cublaslt_autotuned(
    name: str, b_layout: str, acc: str, m: int, n: int, k: int, judge: Callable[[Competitor], float | None],
    top_n: int = LT_TOP_N,
) -> Competitor:
    """Try every algorithm of cuBLASLt's top-N heuristic list; `judge(competitor)` checks one on the benchmark's
    operands and returns its kernel-only µs, or None when it fails the correctness check. Keeps the fastest."""
    from kernels.cublas import lt_algorithms

    algos = list(lt_algorithms(m, n, k, b_layout=b_layout, acc=acc, top_n=top_n))
    best, best_algo, best_us, failed = None, None, float("inf"), []
    for algo in algos:
        index = algo.index
        candidate = cublas_arm(name, "lt_algo", b_layout, acc, algo_index=index, top_n=top_n)
        us = judge(candidate)
        if us is None:
            failed.append(index)
        elif us < best_us:
            best, best_algo, best_us = candidate, algo, us
    if best is None:
        raise RuntimeError(f"{name}: none of {len(algos)} cuBLASLt algorithms passed the correctness check")
    # the kept algorithm's identity goes with its index: a table entry made from it (tuner.confirm.baseline_arm)
    # runs that algorithm wherever another card's or cuBLAS version's list ranks it
    best.info.update(tried=len(algos), failed=failed, autotune_us=best_us, algo=best_algo.identity())
    return best


def baselines(acc: str, m: int, n: int, k: int, judge: Callable[[Competitor], float | None],
              names=BASELINES, top_n: int = LT_TOP_N) -> list[Competitor]:
    made = []
    for name in names:
        layout = "row" if name.endswith("-nn") else "col"
        if name == "torch.matmul":
            made.append(torch_matmul())
        elif name.startswith("cuBLAS-"):
            made.append(cublas_arm(name, f"gemmex_{name[-2:]}", layout, acc))
        elif name.startswith("cuBLASLt-heuristic-"):
            made.append(cublas_arm(name, "lt_heuristic", layout, acc))
        elif name.startswith("cuBLASLt-auto-tuning-"):
            made.append(cublaslt_autotuned(name, layout, acc, m, n, k, judge, top_n))
        else:
            raise ValueError(f"unknown baseline {name!r}")
    return made


def ours_dispatcher(m: int, n: int, k: int, b_layout: str, acc: str, dispatcher=None, name: str = OURS) -> Competitor:
    from kernels.dispatch import Dispatcher

    d = dispatcher or Dispatcher.default()
    sel = d.select(m, n, k, b_layout=b_layout, acc=acc)
    # kernel-only timing replays a CUDA graph, which runs the captured-call choice: name it too (session 27 read a
    # cuBLASLt graph choice's time as the eager sm90 kernel's). `run_acc`: the accumulator each choice runs with (a
    # table may choose fp32 for an f16 call), which tells whether ours ran the very call of a cuBLAS baseline.
    # `lt_algo`: the cuBLASLt algorithm a choice runs (its index here and identity), which lets a grid stamp the
    # identity into a choice tuned before identities were recorded (tuner.confirm)
    graph = d.select(m, n, k, b_layout=b_layout, acc=acc, captured=True)
    return Competitor(name, lambda a, b, out: d.gemm(a, b, b_layout, acc, out), b_layout, "ours",
                      {"kernel": sel.kernel, "fallback": sel.fallback, "padded": sel.padded,
                       "borrowed": getattr(sel, "borrowed", None), "graph_kernel": graph.kernel,
                       "run_acc": sel.acc or acc, "graph_run_acc": graph.acc or acc,
                       "lt_algo": _lt_ran(d, sel, m, n, k, b_layout, acc),
                       "graph_lt_algo": _lt_ran(d, graph, m, n, k, b_layout, acc)})


def _lt_ran(d, sel, m: int, n: int, k: int, b_layout: str, acc: str) -> dict | None:
    """{"algo_index", "algo"} of the cuBLASLt algorithm a selection runs (None for any other choice, or where this
    process cannot name it). A choice that carries an identity already is recorded as the table holds it (the index
    where it was tuned; the identity decides what runs here): tuner.confirm stamps only choices without one."""
    from kernels.dispatch import _lt_algo_index   # the index a cublaslt choice runs, as the dispatcher reads it

    config = sel.config if isinstance(sel.config, dict) else {}
    index = _lt_algo_index(config) if sel.kernel == "cublaslt" else None
    if index is None:
        return None
    identity = config.get("algo") or d.lt_identity(m, n, k, b_layout, sel.acc or acc, index)
    return {"algo_index": index, "algo": dict(identity)} if identity else None


KNOB_LETTERS = {"raster": "r", "swizzle": "w", "splits": "s"}


def knob_suffix(knobs: dict | None) -> str:
    """'@s2', '@r1w4' ...: a variant competitor's non-default runtime knobs ('' when all are the kernel's default)."""
    pairs = [(KNOB_LETTERS[key], int((knobs or {}).get(key, 0))) for key in KNOB_LETTERS]
    text = "".join(f"{letter}{value}" for letter, value in pairs if value)
    return f"@{text}" if text else ""


def parse_knob_suffix(text: str) -> dict[str, int]:
    """The inverse of knob_suffix without its '@': 'r1w4s2' -> {"raster": 1, "swizzle": 4, "splits": 2}."""
    match = re.fullmatch(r"(?:r(\d+))?(?:w(\d+))?(?:s(\d+))?", text)
    if not text or match is None:
        raise ValueError(f"runtime knobs are spelled r<raster>w<swizzle>s<splits> (any of them, in that order), "
                         f"got {text!r}")
    return {key: int(value) for key, value in zip(KNOB_LETTERS, match.groups()) if value is not None}


def ours_variant(cfg, b_layout: str, runtime_knobs: dict | None = None) -> Competitor:
    from kernels import runtime

    kernel = runtime.load(cfg)
    knobs = dict(runtime_knobs or {})
    return Competitor(f"{OURS}:{cfg.name}{knob_suffix(knobs)}", lambda a, b, out: kernel(a, b, out, **knobs),
                      b_layout, "ours",
                      {"kernel": cfg.name, "runtime": knobs})
