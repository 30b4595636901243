"""The search environment on a real GPU: the kernel library's variants as arms, built on demand in parallel
batches, plus the cuBLASLt algorithms of each shape's heuristic list (tuner/lt_arms.py; no build); each arm checked
for correctness then timed kernel-only (CUDA graph, operands beyond L2); the reward's reference is cuBLAS (the faster
of GemmEx and the cuBLASLt heuristic in the same layout), timed the same way on the same operands.

The operands start on 256-byte boundaries like fresh torch allocations, so an arm "cublaslt/a<i>" times algorithm i of the same
heuristic list the dispatcher uses for aligned calls (LT_ALIGN_BYTES)."""
from __future__ import annotations

import statistics
import time

from tuner.arms import Arm, from_kernel_space
from tuner.correctness import check, reference
from tuner.environment import Measurement
from tuner.inputs import copies_needed, device_l2_bytes, make_operands
from tuner.lt_arms import DEFAULT_LT_ARMS, LT, is_lt, lt_arms, lt_list_length
from tuner.retime import Retimed
from tuner.shapes import Shape
from tuner.timing import GraphSampler, order_rng, run_interleaved

SAMPLES = 5
TUNER_MAX_COPIES = 1024


class GpuEnv:
    def __init__(self, acc: str, b_layout: str, variant_set: str | None = "default", arch: str | None = None,
                 jobs: int | None = None, samples: int = SAMPLES, lt_count: int = DEFAULT_LT_ARMS,
                 lt_list=None):
        """lt_count: cuBLASLt ranks explored per shape (0: none); lt_list: kernels.cublas.lt_algorithms or a stand-in
        with its signature (tests)."""
        import torch

        from kernels import build

        self.torch, self.buildlib = torch, build
        self.acc, self.b_layout, self.jobs, self.samples = acc, b_layout, jobs, samples
        self.arms, self.configs = from_kernel_space(acc, b_layout, variant_set, arch)
        self.arms += lt_arms(lt_count)
        self._lt_list = lt_list
        self._lt_lengths: dict[Shape, int] = {}
        self.lt_errors: dict[str, str] = {}  # "MxNxK" -> why the shape has no cuBLASLt arms
        self._built = {name for name, cfg in self.configs.items() if build.find_built(cfg) is not None}
        self.build_errors: dict[str, str] = {}
        self._shape, self._ops, self._ref = None, None, None
        self._cublas: dict[Shape, float] = {}
        self.build_seconds = 0.0

    # --- building -----------------------------------------------------------------------------------------------
    def built(self) -> set[str]:
        return self._built | {LT}  # cuBLASLt arms need no build

    def build(self, names) -> float:
        todo = [self.configs[n] for n in names
                if n in self.configs and n not in self._built and n not in self.build_errors]
        if not todo:
            return 0.0
        t0 = time.monotonic()
        report = self.buildlib.build(todo, jobs=self.jobs)
        for v in report.variants:
            if v.error:
                self.build_errors[v.name] = v.error
            else:
                self._built.add(v.name)
        spent = time.monotonic() - t0
        self.build_seconds += spent
        return spent

    # --- measuring ----------------------------------------------------------------------------------------------
    def lt_length(self, shape: Shape) -> int:
        """Length of the shape's cuBLASLt heuristic list (0, with the reason in lt_errors, if it cannot be had)."""
        if shape not in self._lt_lengths:
            try:
                self._lt_lengths[shape] = lt_list_length(*shape, self.b_layout, self.acc, self._lt_list)
            except Exception as exc:  # noqa: BLE001 - no cuBLASLt arms for this shape, the rest of the search goes on
                self.lt_errors["x".join(map(str, shape))] = f"{type(exc).__name__}: {exc}"
                self._lt_lengths[shape] = 0
        return self._lt_lengths[shape]

    def candidates(self, shape: Shape) -> list[Arm]:
        from kernels import space

        variants = [a for a in self.arms if not is_lt(a) and space.supports(self.configs[a.config], *shape)
                    and space.splits_fit(self.configs[a.config], shape[2], a.splits)]
        lt = [a for a in self.arms if is_lt(a)]
        return variants + ([a for a in lt if a.algo < self.lt_length(shape)] if lt else [])

    def _operands(self, shape: Shape):
        if self._shape != shape:
            torch = self.torch
            self._ops = self._ref = None
            torch.cuda.empty_cache()
            device = torch.device("cuda", torch.cuda.current_device())
            # ranking arms needs less rotation than the benchmark: 1024 copies keep tiny shapes' graphs small
            copies = copies_needed(*shape, device_l2_bytes(device), max_copies=TUNER_MAX_COPIES)
            self._ops = make_operands(*shape, copies, device=device)
            self._ref = reference(self._ops.a[0], self._ops.b_row[0])
            self._shape = shape
        return self._ops

    def _time(self, fn, shape: Shape) -> tuple[float | None, str | None]:
        ops = self._operands(shape)
        res = check(fn, self.b_layout, self.acc, ops.a[0], ops.b_row[0], ops.b_col[0], ops.out[0], ref=self._ref,
                    sync=self.torch.cuda.synchronize)
        if not res.ok:
            return None, res.reason
        try:
            sampler = GraphSampler(fn, [(ops.a[i], ops.b(i, self.b_layout), ops.out[i]) for i in range(ops.copies)])
            return statistics.median(sampler() for _ in range(self.samples)), None
        except Exception as exc:  # noqa: BLE001 - a launch failure is a failed arm, not a failed search
            return None, f"{type(exc).__name__}: {exc}"

    def _reference_runners(self) -> dict:
        """cuBLAS's arms in this layout, whose faster one is the reward's reference."""
        from kernels.cublas import CublasArm

        kinds = ("gemmex_tn" if self.b_layout == "col" else "gemmex_nn", "lt_heuristic")
        return {kind: (lambda a, b, out, arm=CublasArm(kind=kind): arm(a, b, out, b_layout=self.b_layout,
                                                                       acc=self.acc))
                for kind in kinds}

    def cublas_us(self, shape: Shape) -> float:
        if shape not in self._cublas:
            times = [us for us, _ in (self._time(run, shape) for run in self._reference_runners().values()) if us]
            if not times:
                raise RuntimeError(f"no cuBLAS reference for {shape.mnk}")
            self._cublas[shape] = min(times)
        return self._cublas[shape]

    def _runner(self, arm: Arm):
        """The callable (a, b, out) that runs an arm: a built variant with its knobs, or a cuBLASLt algorithm of the
        shape's heuristic list through the launcher the dispatcher binds for a cublaslt entry."""
        if is_lt(arm):
            from kernels.cublas import CublasArm

            return CublasArm("lt_algo", arm.algo).launcher(self.b_layout, self.acc)
        from kernels import runtime

        kernel = runtime.load(self.configs[arm.config], build_if_missing=False)
        knobs = arm.knobs
        return lambda a, b, out: kernel(a, b, out, **knobs)

    def measure(self, shape: Shape, arm: Arm) -> Measurement:
        t0 = time.monotonic()
        ref_us = self.cublas_us(shape)
        if not is_lt(arm) and arm.config not in self._built:
            return Measurement(None, ref_us, 0.0, self.build_errors.get(arm.config, "not_built"))
        try:
            run = self._runner(arm)
        except Exception as exc:  # noqa: BLE001
            return Measurement(None, ref_us, time.monotonic() - t0, f"{type(exc).__name__}: {exc}")
        us, error = self._time(run, shape)
        return Measurement(us, ref_us, time.monotonic() - t0, error)

    def retime(self, shape: Shape, arms: list[Arm], rounds: int) -> Retimed:
        """The arms (each measured, so checked, on these operands) and the cuBLAS reference, kernel-only, one graph
        replay each per round in a fresh order per round (tuner/retime.py); the reference is the faster of its
        arms' medians, as in cublas_us."""
        t0 = time.monotonic()
        ops = self._operands(shape)
        argsets = [(ops.a[i], ops.b(i, self.b_layout), ops.out[i]) for i in range(ops.copies)]
        runners = {("ref", kind): run for kind, run in self._reference_runners().items()}
        samplers, errors = {}, {}
        for arm in arms:
            try:
                runners[arm] = self._runner(arm)
            except Exception as exc:  # noqa: BLE001 - this arm fails the re-timing, the others go on
                errors[arm] = f"{type(exc).__name__}: {exc}"
        for key, run in runners.items():
            try:
                samplers[key] = {"kernel": GraphSampler(run, argsets)}
            except Exception as exc:  # noqa: BLE001
                errors[key] = f"{type(exc).__name__}: {exc}"
        samples = run_interleaved(samplers, 0.0, 0.0, rng=order_rng(0, shape.mnk), min_rounds=rounds,
                                  max_rounds=rounds)
        medians = {key: samples[key].median("kernel") for key in samplers}
        refs = [us for key, us in medians.items() if isinstance(key, tuple) and us]
        if not refs:
            raise RuntimeError(f"no cuBLAS reference for {shape.mnk} in the re-timing: {errors}")
        return Retimed(min(refs), {arm: medians.get(arm) for arm in arms}, time.monotonic() - t0, rounds,
                       {arm: why for arm, why in errors.items() if isinstance(arm, Arm)})
