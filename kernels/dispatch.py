"""Per-shape choice of what runs a GEMM, and the guards around it (Contract 1).

Chain for (M, N, K, b_layout, acc), decided once per shape and cached:
  1. the tuned table entry for the exact shape (its `graph` alternative for calls captured into a CUDA graph, which
     pay no launch cost per replay), else the predictor's config (optional hook)
  2. if that variant cannot run the shape as is (alignment), the same variant on a zero-padded copy
  3. otherwise, for a shape whose N or K is not a multiple of 8, a table entry / prediction for a padded shape
     (e.g. 127x255x511 -> 128x256x512), on a padded copy. An aligned shape is not padded to reach a tuned one: cuBLAS
     runs it as is, and the copies cost more than the tuned kernel gains (session 6: 0.36-0.74x in all 5 cases)
  4. with `nearest` > 0, otherwise the variant tuned for the nearest tuned shape (log2 distance <= nearest), if that
     shape chose one of ours (a neighbour's cuBLAS choice is cuBLAS anyway; its cuBLASLt index names another shape's
     algorithm list, so it is not borrowed)
  5. otherwise cuBLAS, with the reason (FALLBACK_REASONS) of the first thing that stood in the way; an fp16-accumulation
     request runs it with fp32 accumulation (`fallback_f16_acc`): more precise, and on the H200 cuBLAS's fp32-compute
     kernels are the faster ones (session 6: 13% kernel-only over 128 untuned shapes, docs/results.md)
Guards per call: a variant that raises (or fails its launch) is quarantined for the process and the call is redone on
cuBLAS (`kernel_error`); the canary reruns a sample of calls on cuBLAS and quarantines a variant that disagrees
(`canary_mismatch`), returning cuBLAS's result. Later calls of a quarantined variant say `quarantined`.

A tuned cuBLASLt entry ({"kind": "lt_algo", "algo_index": i}) runs algorithm i of the shape's heuristic list as the
tuner timed it: the top-32 list for LT_ALIGN_BYTES-aligned operands. Its index is checked against that list when the
shape is decided (out of range: cuBLAS for that shape, `tuned_elsewhere`: the table comes from another GPU or cuBLAS;
no list at all: quarantined for that shape, `kernel_error`), and a call whose pointers are not that aligned runs on
cuBLAS (`unaligned`): for it the same index would name another algorithm, or none. An entry that also carries the
algorithm's identity ("algo") runs that algorithm wherever this process's list has it (another GPU or cuBLAS may rank
it elsewhere), and falls back like an out-of-range index where the list lacks it.

Everything device-specific comes in through the constructor (kernel loader, shape rule, arm factory, tables), so the
logic runs on the CPU with small launchers that compute with torch. docs/dispatch.md has the details.
"""
from __future__ import annotations

import logging
import math
import os
import random
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable

import torch

from kernels.fastpath import CANARY
from kernels.padding import PadBufferPool, PaddedLauncher, pad_targets

log = logging.getLogger(__name__)

FALLBACK_REASONS = ("no_tuned_kernel", "unaligned", "kernel_error", "quarantined", "not_built", "cpu_backend",
                    "canary_mismatch", "tuned_elsewhere")
B_LAYOUTS = ("row", "col")
ACCS = ("f32", "f16")
Launcher = Callable[[Any, Any, Any], Any]  # run(a, b, out) -> out, on torch's current stream
LT_ALIGN_BYTES = 256  # operand alignment a tuned cuBLASLt index refers to (the tuner's: tuner/lt_arms.py)
FALLBACK_F16_ACC = "f32"  # the cuBLAS fallback's accumulator for an fp16-accumulation request (step 5 above)
PAD_LOOKUP_ALIGN = 8  # step 3 pads only shapes whose N or K is not a multiple of this (fp16 x 8 = 16 bytes)


def nearest_from_env() -> float:
    """Dispatcher.default's `nearest` (step 4 of the chain): $HGEMM_NEAREST, a log2 distance; unset or 0: off."""
    raw = os.environ.get("HGEMM_NEAREST", "").strip()
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        raise ValueError(f"HGEMM_NEAREST must be a number (a log2 distance; 0: off), got {raw!r}") from None
    if not value >= 0:
        raise ValueError(f"HGEMM_NEAREST must be >= 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class Selection:
    kernel: str                 # variant name, or "cublas" / "cublaslt" / "torch_cpu"
    fallback: str | None        # None, or one of FALLBACK_REASONS
    run: Launcher
    config: Any = None          # the KernelConfig when a built variant runs; arm options for a tuned arm
    padded: tuple[int, int, int] | None = None  # the shape actually computed when operands are zero-padded
    guarded: bool = False       # tuned choices (variants, cuBLASLt arms): errors and the canary fall back to cuBLAS
    align: int = 0              # pointer alignment (bytes) the choice needs; other calls run on cuBLAS (`unaligned`)
    acc: str | None = None      # the accumulator the kernel runs with when a table chose a more precise one
    borrowed: tuple[int, int, int] | None = None  # the tuned shape whose choice this is (step 4, `nearest`)


@dataclass(frozen=True)
class DispatchEvent:
    kind: str                   # "quarantine" | "canary" | "predictor_error"
    kernel: str
    shape: tuple                # (m, n, k, b_layout, acc)
    reason: str | None = None   # for "quarantine": kernel_error | canary_mismatch
    detail: str = ""
    ok: bool | None = None      # for "canary": whether the variant agreed with cuBLAS
    rel_err: float | None = None


def canary_tolerance(acc: str, k: int) -> float:
    """Relative Frobenius error allowed between a variant and cuBLAS (both round to fp16 at the end).
    f32: fp16 output rounding gives ~4e-4 between two correct kernels; 1e-2 leaves a wide margin while a wrong tile,
    layout or K-chunk gives O(0.1..1). f16: fp16 accumulation error grows like sqrt(K) * 2^-11 per kernel."""
    if acc == "f32":
        return 1e-2
    return 1e-2 + 2.0 * math.sqrt(k) * 2.0 ** -11


def relative_error(out, ref) -> float:
    """||out - ref||_F / ||ref||_F in fp32 (absolute when ref is all zeros); NaN/Inf give inf."""
    diff = torch.linalg.vector_norm(out.float() - ref.float()).item()
    scale = torch.linalg.vector_norm(ref.float()).item()
    err = diff / scale if scale > 0 else diff
    return err if math.isfinite(err) else math.inf


def torch_gemm(a, b, out, *, b_layout: str = "row", acc: str = "f32"):
    """The CPU backend: fp16 in, fp32 accumulation (for acc=f16 too), fp16 out."""
    bf = b.float() if b_layout == "row" else b.float().t()
    out.copy_(a.float() @ bf)
    return out


def _checked_torch_gemm(a, b, out, *, b_layout: str, acc: str):
    validate_operands(a, b, out, a.shape[0], b.shape[1] if b_layout == "row" else b.shape[0])
    return torch_gemm(a, b, out, b_layout=b_layout, acc=acc)


def _default_arm_factory(kernel: str, options: dict):
    from kernels.cublas import CublasArm

    if kernel == "cublas":
        return CublasArm(options.get("kind", "gemmex"))
    kind = options.get("kind", "lt_algo" if "algo_index" in options else "lt_heuristic")
    return CublasArm(kind, options.get("algo_index", 0))


def _lt_algo_index(options: dict | None) -> int | None:
    """The heuristic-list index a cublaslt entry runs (kind lt_algo, as _default_arm_factory reads it), else None."""
    options = options or {}
    kind = options.get("kind", "lt_algo" if "algo_index" in options else "lt_heuristic")
    return int(options.get("algo_index", 0)) if kind == "lt_algo" else None


def _default_lt_algo_count(device_index: int | None) -> Callable[[int, int, int, str, str], int]:
    """Length of the heuristic list CublasArm("lt_algo", i) indexes for LT_ALIGN_BYTES-aligned operands."""
    def count(m: int, n: int, k: int, b_layout: str, acc: str) -> int:
        from kernels.cublas import DEFAULT_TOP_N, lt_algorithms

        return len(lt_algorithms(m, n, k, b_layout, acc, DEFAULT_TOP_N, device=device_index,
                                 align_bytes=LT_ALIGN_BYTES))
    return count


def lt_identities_of(device_index: int | None = None) -> Callable[[int, int, int, str, str], list[dict]]:
    """The identities (kernels.tuned_tables.LT_IDENTITY) of that list's algorithms, in its order (what an entry's
    "algo" is looked up in; tuner.lt_identity records from it)."""
    def identities(m: int, n: int, k: int, b_layout: str, acc: str) -> list[dict]:
        from kernels.cublas import DEFAULT_TOP_N, lt_algorithms

        return [a.identity() for a in lt_algorithms(m, n, k, b_layout, acc, DEFAULT_TOP_N, device=device_index,
                                                    align_bytes=LT_ALIGN_BYTES)]
    return identities


def _arm_options(config: dict | None) -> dict:
    """What an arm is made from: an lt_algo entry's identity only chooses the index (Dispatcher._lt_index)."""
    return {key: value for key, value in (config or {}).items() if key != "algo"}


def _default_loader(cfg):
    from kernels import runtime

    return runtime.load(cfg, build_if_missing=False)  # never compile (minutes) inside a request


def _default_supports(cfg, m: int, n: int, k: int) -> bool:
    from kernels import space

    return space.supports(cfg, m, n, k)


def _not_built_errors() -> tuple[type, ...]:
    from kernels.runtime import KernelNotBuilt

    return (KernelNotBuilt,)


class Dispatcher:
    """See the module docstring. Thread-safe: decisions are cached in a dict swapped under a lock."""

    def __init__(self, *, tables: dict | None = None, backend: str = "gpu", arch: str = "", device=None, gpu: str = "",
                 load_kernel: Callable[[Any], Launcher] | None = None,
                 supports: Callable[[Any, int, int, int], bool] | None = None,
                 arm_factory: Callable[[str, dict], Any] | None = None,
                 lt_algo_count: Callable[[int, int, int, str, str], int] | None = None,
                 lt_identities: Callable[[int, int, int, str, str], list[dict]] | None = None,
                 lt_align_bytes: int = LT_ALIGN_BYTES,
                 not_built_errors: tuple[type, ...] | None = None,
                 predictor: Callable[..., Any] | None = None, pad: bool = True, max_pad_ratio: float = 1.25,
                 pad_budget_bytes: int = 512 << 20, nearest: float = 0.0, fallback_f16_acc: str = FALLBACK_F16_ACC,
                 canary_rate: float = 0.0,
                 tolerance: Callable[[str, int], float] = canary_tolerance,
                 on_event: Callable[[DispatchEvent], None] | None = None, rng: random.Random | None = None,
                 fast_path: Any = None):
        if backend not in ("gpu", "cpu"):
            raise ValueError(f"backend must be 'gpu' or 'cpu', got {backend!r}")
        self.backend, self.arch, self.device = backend, arch, device
        self.gpu = gpu  # the card's name: its own overlay of the tables, if it has one (kernels.tuned_tables)
        self.tables = dict(tables or {})  # acc -> TunedTable
        # whether any entry names another choice for captured calls: only then does a call ask whether it is captured
        self._graph_choices = any(entry.graph is not None for table in self.tables.values()
                                  for entry in getattr(table, "entries", {}).values())
        self.predictor = predictor
        self.pad, self.max_pad_ratio, self.pad_budget_bytes = pad, max_pad_ratio, pad_budget_bytes
        if not nearest >= 0:
            raise ValueError(f"nearest must be a log2 distance >= 0 (0: off), got {nearest!r}")
        self.nearest = float(nearest)
        if fallback_f16_acc not in ACCS:
            raise ValueError(f"fallback_f16_acc must be in {ACCS}, got {fallback_f16_acc!r}")
        self.fallback_f16_acc = fallback_f16_acc
        self.tolerance = tolerance
        self._load_kernel = load_kernel or _default_loader
        self._supports = supports or _default_supports
        self._arm_factory = arm_factory or _default_arm_factory
        # lt_algo_count(m, n, k, b_layout, acc): the heuristic list's length, to check a tuned index against (with
        # the real cuBLAS arms by default; with a custom arm_factory only if given)
        if lt_algo_count is None and arm_factory is None and backend == "gpu":
            lt_algo_count = _default_lt_algo_count(getattr(device, "index", None))
        self._lt_algo_count = lt_algo_count
        # lt_identities(m, n, k, b_layout, acc): the identities in that list, in order, to find an entry's tuned
        # algorithm by ("algo"); without it such an entry is checked by its index alone
        if lt_identities is None and arm_factory is None and backend == "gpu":
            lt_identities = lt_identities_of(getattr(device, "index", None))
        self._lt_identities = lt_identities
        self.lt_align_bytes = lt_align_bytes
        self._not_built = not_built_errors
        self._rng = (rng or random.Random()).random
        # the C fast path (kernels/fastpath): None = build one for the GPU backend, False = off, or a FastTable
        if fast_path is None and backend == "gpu":
            from kernels import fastpath

            fast_path = fastpath.new_table()
        self._fast = None if fast_path is None or fast_path is False else fast_path  # (an empty table is falsy)
        if self._fast is not None:  # a captured call must find the graph choice's entry, never the eager one's
            self._fast.graph_choices = self._graph_choices
        self.canary_rate = canary_rate
        self._listeners: list[Callable[[DispatchEvent], None]] = [on_event] if on_event else []
        self._lock = threading.RLock()
        self._cache: dict[tuple, Selection] = {}
        self._graph_ready: set[tuple] = set()  # eager keys whose graph choice ran once (_prepare_graph_choice)
        self._quarantine: dict[str, str] = {}  # name -> reason
        self._arms: dict[tuple, Any] = {}
        self._pad_pool = None

    # ---- construction ---------------------------------------------------------------------------------------------
    @classmethod
    def default(cls, device=None, **kwargs) -> "Dispatcher":
        """The dispatcher for a CUDA device (tables for its arch, cuBLAS arms, built variants), or the CPU backend
        when there is no CUDA. Needs no build: variants that are not built fall back with `not_built`."""
        from kernels.tuned_tables import load_default_tables

        if (device is not None and torch.device(device).type == "cpu") or not torch.cuda.is_available():
            return cls(backend="cpu", device=torch.device("cpu"), **kwargs)
        device = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        major, minor = torch.cuda.get_device_capability(device)
        arch, gpu = f"sm{major}{minor}", torch.cuda.get_device_name(device)
        kwargs.setdefault("tables", load_default_tables(arch, gpu=gpu))
        kwargs.setdefault("nearest", nearest_from_env())
        return cls(backend="gpu", arch=arch, device=device, gpu=gpu, **kwargs)

    # ---- configuration --------------------------------------------------------------------------------------------
    @property
    def canary_rate(self) -> float:
        return self._canary_rate

    @canary_rate.setter
    def canary_rate(self, rate: float) -> None:
        rate = float(rate)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"canary_rate must be in [0, 1], got {rate}")
        self._canary_rate = rate
        if self._fast is not None:  # the fast path samples every n-th tuned call instead of drawing per call
            self._fast.canary_every = round(1.0 / rate) if rate else 0

    def add_listener(self, callback: Callable[[DispatchEvent], None]) -> None:
        """callback(DispatchEvent) on quarantines, canary checks and predictor errors (e.g. the service's metrics)."""
        self._listeners.append(callback)

    def quarantined(self) -> dict[str, str]:
        """{variant name: reason} of the variants this process no longer runs."""
        return dict(self._quarantine)

    def set_tables(self, tables: dict) -> None:
        """Serve other tuned tables from now on (acc -> TunedTable; e.g. re-read after tuning a deployment's shapes):
        every decision is remade from them, the fast path's included. Quarantines stay: a variant that failed here
        still failed."""
        with self._lock:
            self.tables = dict(tables)
            self._graph_choices = any(entry.graph is not None for table in self.tables.values()
                                      for entry in getattr(table, "entries", {}).values())
            self._cache, self._graph_ready = {}, set()
            if self._fast is not None:
                self._fast.clear()
                self._fast.graph_choices = self._graph_choices

    def clear_cache(self) -> None:
        with self._lock:
            self._cache, self._graph_ready = {}, set()
            if self._fast is not None:
                self._fast.clear()

    def fast_path_stats(self) -> dict | None:
        """{'hits', 'misses', 'entries'} of the C fast path, or None when it is off / unavailable."""
        return self._fast.stats() if self._fast is not None else None

    # ---- selection ------------------------------------------------------------------------------------------------
    def select(self, m: int, n: int, k: int, b_layout: str = "row", acc: str = "f32", *,
               captured: bool = False) -> Selection:
        """captured: for a call being captured into a CUDA graph (the table's `graph` choice, where it has one)."""
        captured = captured and self._graph_choices
        key = _cache_key(m, n, k, b_layout, acc, captured)
        sel = self._cache.get(key)
        if sel is None:
            if b_layout not in B_LAYOUTS or acc not in ACCS:
                raise ValueError(f"b_layout must be in {B_LAYOUTS} and acc in {ACCS}, got {b_layout!r}, {acc!r}")
            if min(m, n, k) < 1:
                raise ValueError(f"M, N, K must be >= 1, got {m}, {n}, {k}")
            with self._lock:
                sel = self._decide(m, n, k, b_layout, acc, captured)
                self._cache = {**self._cache, key: sel}
        return sel

    def _decide(self, m, n, k, b_layout, acc, captured: bool = False) -> Selection:
        if self.backend == "cpu":
            return Selection("torch_cpu", "cpu_backend", _bind_arm(_checked_torch_gemm, b_layout, acc))
        blocked = None  # the first reason a chosen variant could not run
        choice = self._choice(m, n, k, b_layout, acc, captured)
        if choice is not None:
            sel, blocked = self._realize(choice, (m, n, k), b_layout, acc, padded_lookup=False)
            if sel is not None:
                return sel
        if self.pad and (n % PAD_LOOKUP_ALIGN or k % PAD_LOOKUP_ALIGN):
            for target in pad_targets(m, n, k, self.max_pad_ratio):
                choice = self._choice(*target, b_layout, acc, captured)
                if choice is None:
                    continue
                sel, why = self._realize(choice, (m, n, k), b_layout, acc, padded_lookup=True, target=target)
                if sel is not None:
                    return sel
                blocked = blocked or why
        if self.nearest > 0:
            borrowed = self._nearest_choice(m, n, k, b_layout, acc, captured)
            if borrowed is not None:
                neighbour, choice = borrowed
                sel, why = self._realize(choice, (m, n, k), b_layout, acc, padded_lookup=False)
                if sel is not None:
                    return replace(sel, borrowed=neighbour)
                blocked = blocked or why
        return self._cublas(b_layout, acc, blocked or "no_tuned_kernel")

    def _nearest_choice(self, m, n, k, b_layout, acc, captured: bool = False):
        """((m, n, k) of the nearest tuned shape, its choice as _choice returns it) when that shape chose a variant."""
        table = self.tables.get(acc)
        entry = table.nearest(m, n, k, b_layout, self.nearest) if table is not None else None
        if entry is None:
            return None
        chosen = entry.graph if captured and entry.graph is not None else entry
        if chosen.is_arm:
            return None
        return (entry.m, entry.n, entry.k), (chosen.kernel, chosen.config, chosen.runtime, chosen.acc or acc)

    def _choice(self, m, n, k, b_layout, acc, captured: bool = False):
        """(kernel name, config or arm options, runtime knobs, accumulator to run with) from the table, else the
        predictor; or None. The table may answer an f16 request with an f32-accumulating kernel (more precise), and a
        captured call with the entry's `graph` choice."""
        table = self.tables.get(acc)
        entry = table.lookup(m, n, k, b_layout) if table is not None else None
        if entry is not None:
            if captured and entry.graph is not None:
                entry = entry.graph
            return entry.kernel, entry.config, entry.runtime, entry.acc or acc
        if self.predictor is None:
            return None
        try:
            predicted = self.predictor(m, n, k, b_layout, acc)
        except Exception as error:  # a broken predictor must never break a GEMM
            self._emit(DispatchEvent("predictor_error", "predictor", (m, n, k, b_layout, acc), detail=repr(error)))
            return None
        if predicted is None:
            return None
        cfg, knobs = predicted if isinstance(predicted, tuple) else (predicted, {})
        if getattr(cfg, "acc", acc) != acc or getattr(cfg, "b_layout", b_layout) != b_layout:
            self._emit(DispatchEvent("predictor_error", cfg.name, (m, n, k, b_layout, acc),
                                     detail="predicted a config for another acc / b_layout"))
            return None
        return cfg.name, cfg, dict(knobs), acc

    def _realize(self, choice, shape, b_layout, acc, *, padded_lookup: bool, target=None):
        """(Selection, None) if the choice can run `shape` (padded if needed), else (None, reason or None)."""
        name, config, knobs, run_acc = choice
        more_precise = run_acc if run_acc != acc else None  # what Selection.acc reports
        if name in self._quarantine:
            return None, "quarantined"
        if name in ("cublas", "cublaslt"):
            if padded_lookup:  # cuBLAS handles any shape: padding for it only costs copies
                return None, None
            index = _lt_algo_index(config) if name == "cublaslt" else None
            if index is not None:
                found, why = self._lt_index(config, index, shape, b_layout, run_acc)
                if why is not None:
                    return None, why
                if found != index:
                    config = dict(config, algo_index=found)   # the same algorithm, where this list ranks it
            run = _bind_arm(self._arm(name, _arm_options(config)), b_layout, run_acc)
            return Selection(name, None, run, config=dict(config or {}), guarded=name != "cublas",
                             align=self.lt_align_bytes if index is not None else 0, acc=more_precise), None
        m, n, k = shape
        if target is None and not self._supports(config, m, n, k):
            if self.pad:  # the same variant on the smallest padded shape it supports
                target = next((t for t in pad_targets(m, n, k, self.max_pad_ratio) if self._supports(config, *t)),
                              None)
            if target is None:
                return None, "unaligned"
        elif target is not None and not self._supports(config, *target):
            return None, "unaligned"
        try:
            kernel = self._load_kernel(config)
        except self._not_built_exceptions():
            return None, "not_built"
        except Exception as error:
            self._quarantine_now(name, "kernel_error", (m, n, k, b_layout, acc), f"load failed: {error!r}")
            return None, "kernel_error"
        run = _bind_kernel(kernel, knobs)
        if target is not None:
            run = PaddedLauncher(run, shape, target, b_layout, self._pool())
        return Selection(name, None, run, config=config, padded=target, guarded=True, acc=more_precise), None

    def _lt_index(self, config: dict, index: int, shape, b_layout: str, acc: str) -> tuple[int | None, str | None]:
        """(the index to run, None): where this process's heuristic list for the shape has the entry's algorithm
        (its identity "algo", preferring `index`, where it was tuned), or else has entry `index` at all; or (None,
        fallback reason): `tuned_elsewhere` where the list lacks it (the table comes from another GPU or cuBLAS: an
        expected answer, decided once per shape and logged as a warning, nothing failed), `kernel_error` with the
        entry quarantined for this shape where there is no list."""
        algo = config.get("algo") if self._lt_identities is not None else None
        if algo is None and self._lt_algo_count is None:
            return index, None
        m, n, k = shape
        key = f"cublaslt[{index}]@{m}x{n}x{k}/{b_layout}/{acc}"
        if key in self._quarantine:
            return None, "quarantined"
        try:
            if algo is not None:
                listed = self._lt_identities(m, n, k, b_layout, acc)
                matches = [i for i, identity in enumerate(listed) if identity == algo]
                found = index if index in matches else next(iter(matches), None)
                detail = (f"the tuned algorithm {algo} (index {index} where tuned) is not in this heuristic list of "
                          f"{len(listed)}: tuned on another GPU or cuBLAS")
            else:
                count = self._lt_algo_count(m, n, k, b_layout, acc)
                found = index if index < count else None
                detail = f"algo_index {index} outside the heuristic list of {count}"
        except Exception as error:  # no heuristic list here: the tuned index means nothing
            self._quarantine_now(key, "kernel_error", (m, n, k, b_layout, acc),
                                 f"heuristic list unavailable: {error!r}")
            return None, "kernel_error"
        if found is not None:
            return found, None
        log.warning("cuBLASLt choice at %s runs on cuBLAS here: %s", (m, n, k, b_layout, acc), detail)
        return None, "tuned_elsewhere"

    def lt_identity(self, m: int, n: int, k: int, b_layout: str, acc: str, index: int) -> dict | None:
        """The identity of algorithm `index` of this process's heuristic list for the shape: what a cuBLASLt choice
        at that index runs here (the benchmark records it for ours, tuner.competitors); None without such a list."""
        if self._lt_identities is None:
            return None
        try:
            listed = self._lt_identities(m, n, k, b_layout, acc)
        except Exception:  # no list here: nothing to name (the choice itself falls back, _lt_index)
            return None
        return dict(listed[index]) if 0 <= index < len(listed) else None

    def _not_built_exceptions(self) -> tuple[type, ...]:
        if self._not_built is None:
            self._not_built = _not_built_errors()
        return self._not_built

    def _pool(self):
        if self._pad_pool is None:
            self._pad_pool = PadBufferPool(self.pad_budget_bytes)
        return self._pad_pool

    def _arm(self, name: str, options: dict | None):
        key = (name, tuple(sorted((options or {}).items())))
        arm = self._arms.get(key)
        if arm is None:
            arm = self._arms[key] = self._arm_factory(name, dict(options or {}))
        return arm

    def _cublas(self, b_layout: str, acc: str, reason: str) -> Selection:
        assert reason in FALLBACK_REASONS, reason
        run_acc = self.fallback_f16_acc if acc == "f16" else acc
        return Selection("cublas", reason, _bind_arm(self._arm("cublas", {}), b_layout, run_acc),
                         acc=run_acc if run_acc != acc else None)

    # ---- quarantine and events ------------------------------------------------------------------------------------
    def _quarantine_now(self, name: str, reason: str, shape: tuple, detail: str) -> None:
        with self._lock:
            if name in self._quarantine:
                return
            self._quarantine[name] = reason
            self._cache = {key: sel for key, sel in self._cache.items() if sel.kernel != name}
            self._graph_ready = set()  # a quarantined graph choice's shapes get their new one warmed
            if self._fast is not None:
                self._fast.clear()
        log.error("quarantined kernel %s (%s) at %s: %s", name, reason, shape, detail)
        self._emit(DispatchEvent("quarantine", name, shape, reason=reason, detail=detail))

    def _emit(self, event: DispatchEvent) -> None:
        for callback in list(self._listeners):
            try:
                callback(event)
            except Exception:  # metrics hooks must never break a GEMM
                log.exception("dispatch event listener failed")

    # ---- calls ----------------------------------------------------------------------------------------------------
    def run(self, a, b, b_layout: str = "row", acc: str = "f32", out=None):
        """C = A @ B on torch's current stream. Returns (out, the Selection that produced it).

        A shape whose launch the C fast path holds is served there in one call; everything else (first calls,
        non-contiguous or misaligned operands, padded shapes, canary samples, errors) takes the Python path below."""
        fast = self._fast
        if fast is None:
            return self._run(a, b, b_layout, acc, out, False)
        served = fast.run(a, b, out, b_layout, acc)
        if served.__class__ is tuple:
            return served
        return self._run(a, b, b_layout, acc, out, served == CANARY)

    def _run(self, a, b, b_layout: str, acc: str, out, canary: bool):
        """The Python path. Operands are validated by the launcher itself (built variants and cuBLAS arms check
        dtype, shapes, strides and device before launching anything), so the cached path checks nothing twice. When
        a variant raises, the operands are checked here first: a caller's mistake is re-raised as such and never
        quarantines a kernel. canary: this call is a fast-path canary sample."""
        if a.dim() != 2 or b.dim() != 2:
            raise ValueError(f"a and b must be 2-D, got {a.dim()}-D and {b.dim()}-D")
        m, k = a.shape
        if b_layout == "row":
            kb, n = b.shape
        else:
            n, kb = b.shape
        if kb != k:
            raise ValueError(f"a{tuple(a.shape)} and b{tuple(b.shape)} do not match for b_layout={b_layout!r}")
        # (the C fast path keys its launches on the capture status too, asking the driver: see fastpath.c)
        captured = self._graph_choices and _capturing(a)
        key = _cache_key(m, n, k, b_layout, acc, captured)
        sel = self._cache.get(key)
        if out is None:
            out = a.new_empty((m, n))
        if sel is None:
            sel = self.select(m, n, k, b_layout, acc, captured=captured)
        if self._graph_choices and not captured and key not in self._graph_ready:
            self._prepare_graph_choice(sel, a, b, out, (m, n, k, b_layout, acc))
        if not sel.guarded:  # the cuBLAS fallback / the CPU: nothing left to fall back to
            sel.run(a, b, out)
            if self._fast is not None:
                self._remember(sel, a, b, out, key)
            return out, sel
        if sel.align and (a.data_ptr() | b.data_ptr() | out.data_ptr()) % sel.align:
            fallback = self._cublas(b_layout, acc, "unaligned")  # a tuned cuBLASLt index assumes aligned pointers
            fallback.run(a, b, out)
            return out, fallback
        try:
            sel.run(a, b, out)
        except Exception as error:
            validate_operands(a, b, out, m, n)
            self._quarantine_now(sel.kernel, "kernel_error", (m, n, k, b_layout, acc), repr(error))
            fallback = self._cublas(b_layout, acc, "kernel_error")
            fallback.run(a, b, out)
            return out, fallback
        if (canary or (self._canary_rate and self._rng() < self._canary_rate)) and not _capturing(a):
            out, ran = self._canary(sel, a, b, out, (m, n, k, b_layout, acc))
            if ran is sel and self._fast is not None:  # it agreed with cuBLAS: serve it from C from now on
                self._remember(sel, a, b, out, key)
            return out, ran
        if self._fast is not None:
            self._remember(sel, a, b, out, key)
        return out, sel

    def _prepare_graph_choice(self, sel: Selection, a, b, out, shape: tuple) -> None:
        """On a shape's first eager call, run its graph choice once as well (into `out`, which the eager choice then
        overwrites): a later capture then finds that kernel loaded and its cuBLASLt plan made — capture is no place
        for first-use work — and a choice that fails here is quarantined before any graph records it. Keyed apart
        from the selection cache, which select() fills without operands (session 26: tuner.evaluate selected first,
        so the first captured GemmEx created the cuBLAS handle, which the capture refused)."""
        self._graph_ready.add(_cache_key(*shape, False))
        graph = self.select(*shape, captured=True)
        if graph is sel or (graph.kernel, graph.config) == (sel.kernel, sel.config):  # nothing new to load
            return
        m, n, k, b_layout, acc = shape
        if graph.align and (a.data_ptr() | b.data_ptr() | out.data_ptr()) % graph.align:
            return  # these operands would run it on cuBLAS anyway
        try:
            graph.run(a, b, out)
        except Exception as error:
            validate_operands(a, b, out, m, n)
            self._quarantine_now(graph.kernel, "kernel_error", shape, f"graph choice: {error!r}")

    def gemm(self, a, b, b_layout: str = "row", acc: str = "f32", out=None):
        """C = A @ B (Contract 1)."""
        fast = self._fast
        if fast is None:
            return self._run(a, b, b_layout, acc, out, False)[0]
        served = fast.gemm(a, b, out, b_layout, acc)
        if served.__class__ is not int:
            return served
        return self._run(a, b, b_layout, acc, out, served == CANARY)[0]

    def _remember(self, sel: Selection, a, b, out, key: tuple) -> None:
        """Hand the launch just made to the C fast path, keyed by shape, device, stream and capture (unpadded
        selections of launchers that can describe themselves: built variants and the cuBLAS arms). key: the
        Selection's cache key (shape, plus "graph" for a captured call's choice)."""
        fast_entry = getattr(sel.run, "fast_entry", None)
        if fast_entry is None or sel.padded is not None:
            return
        try:
            spec = fast_entry(a, b, out)
            if spec is None:
                return
            stream, fn_address, template, align, keep = spec
            m, n, k, b_layout, acc = key[:5]
            with self._lock:
                if self._cache.get(key) is sel:  # not quarantined meanwhile
                    self._fast.put(m, n, k, b_layout, acc, a.get_device(), stream, len(key) > 5, fn_address,
                                   template, max(align, sel.align), sel.guarded, sel, keep)
        except Exception:  # the Python path keeps serving the shape
            log.exception("could not hand %s at %s to the fast path", sel.kernel, key)

    def _canary(self, sel: Selection, a, b, out, shape: tuple):
        """Rerun on cuBLAS and compare (this synchronizes the stream: it is for a sample of calls only)."""
        m, n, k, b_layout, acc = shape
        reference = self._cublas(b_layout, acc, "canary_mismatch")
        expected = out.new_empty(out.shape)
        reference.run(a, b, expected)
        err, bound = relative_error(out, expected), self.tolerance(acc, k)
        ok = err <= bound
        self._emit(DispatchEvent("canary", sel.kernel, shape, ok=ok, rel_err=err,
                                 detail=f"relative Frobenius error {err:.3g} (bound {bound:.3g})"))
        if ok:
            return out, sel
        self._quarantine_now(sel.kernel, "canary_mismatch", shape,
                             f"relative Frobenius error {err:.3g} > {bound:.3g} vs cuBLAS")
        out.copy_(expected)
        return out, reference


def validate_operands(a, b, out, m: int, n: int) -> None:
    """Raise TypeError / ValueError for operands no launcher may run: not fp16, out not m x n, not contiguous
    (row-major), not all on one device."""
    f16 = torch.float16
    if a.dtype != f16 or b.dtype != f16 or out.dtype != f16:
        raise TypeError(f"a, b and out must be float16, got {a.dtype}, {b.dtype}, {out.dtype}")
    if out.dim() != 2 or out.shape[0] != m or out.shape[1] != n:
        raise ValueError(f"out must be {m}x{n}, got {tuple(out.shape)}")
    if not (a.is_contiguous() and b.is_contiguous() and out.is_contiguous()):
        raise ValueError("a, b and out must be contiguous (row-major)")
    device = a.get_device()
    if b.get_device() != device or out.get_device() != device:
        raise ValueError("a, b and out must be on the same device")


def _cache_key(m: int, n: int, k: int, b_layout: str, acc: str, captured: bool) -> tuple:
    """A shape's key in the selection cache; a captured call's choice is kept beside the eager one."""
    return (m, n, k, b_layout, acc, "graph") if captured else (m, n, k, b_layout, acc)


def _capturing(a) -> bool:
    if not a.is_cuda:
        return False
    return torch.cuda.is_current_stream_capturing()


def _bind_kernel(kernel, knobs: dict) -> Launcher:
    raster, swizzle, splits = (int(knobs.get(name, 0)) for name in ("raster", "swizzle", "splits"))
    launcher = getattr(kernel, "launcher", None)  # CompiledKernel: a prepared run(a, b, out) with the knobs bound
    if launcher is not None:
        return launcher(raster, swizzle, splits)
    if not (raster or swizzle or splits):
        return kernel
    return lambda a, b, out: kernel(a, b, out, raster=raster, swizzle=swizzle, splits=splits)


def _bind_arm(arm, b_layout: str, acc: str) -> Launcher:
    launcher = getattr(arm, "launcher", None)  # CublasArm: a prepared run(a, b, out), no per-call flag lookups
    if launcher is not None:
        return launcher(b_layout, acc)
    return lambda a, b, out: arm(a, b, out, b_layout=b_layout, acc=acc)


__all__ = ["Dispatcher", "Selection", "DispatchEvent", "FALLBACK_REASONS", "canary_tolerance", "relative_error",
           "torch_gemm", "validate_operands"]
