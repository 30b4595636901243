"""The running service: settings, metrics, backend, operand registry and batcher, and its life cycle — start the
batcher, load the backend and pass a warm-up GEMM off the event loop (only then ready), drain on shutdown."""
from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from pathlib import Path

import numpy as np

from .backends import Backend, make_backend
from .batcher import Batcher
from .jobs import Job, JobResult
from .metrics import Metrics
from .operand_store import SharedOperandStore
from .operands import OperandRegistry
from .settings import Settings
from .table_reload import TableReloads
from .untuned import UNTUNED_REASONS, UntunedShapes
from .workers import Readiness, worker_exit

log = logging.getLogger(__name__)

# (m, n, k): the load-test shape and an unaligned one, each in both layouts
WARMUP_SHAPES = ((64, 4096, 64), (33, 17, 40))
WARMUP_TOLERANCE = {"f32": 2e-3, "f16": 2e-2}  # relative Frobenius error vs float64


class ServiceState:
    def __init__(self, settings: Settings, backend: Backend | None = None):
        self.settings = settings
        self.metrics = Metrics()
        self.backend = backend or make_backend(settings)
        # several worker processes (HGEMM_WORKERS) share operands and counts through a folder (service/workers.py)
        shared = Path(settings.shared_dir) if settings.shared_dir else None
        self.registry = OperandRegistry(settings.operand_budget_bytes,
                                        SharedOperandStore(shared / "operands") if shared else None,
                                        loader=self.backend.resident)
        self.untuned = UntunedShapes(shared_dir=shared / "untuned" if shared else None)
        self.readiness = Readiness(shared, settings.workers)
        self.table_reloads = TableReloads(self.backend.reload_tables, shared, settings.workers)
        self.batcher = Batcher(self._run_batch, max_batch_size=settings.max_batch_size,
                               max_queue_delay_s=settings.max_queue_delay_s, capacity=settings.queue_capacity,
                               timeout_s=settings.request_timeout_s, observers=[self.metrics],
                               gather=settings.batch_gather)
        self.ready = False
        self.not_ready_reason = "loading the backend"
        self._loader: asyncio.Task | None = None
        self.metrics.queue_capacity.set(settings.queue_capacity)
        self.metrics.resident_budget_bytes.set(settings.operand_budget_bytes)
        self.metrics.ready.set(0)

    async def start(self) -> None:
        if self.settings.gil_switch_interval_us:  # per process: each worker sets its own
            sys.setswitchinterval(self.settings.gil_switch_interval_us / 1e6)
        self.batcher.start()
        self._loader = asyncio.get_running_loop().create_task(asyncio.to_thread(self._load))

    async def stop(self) -> None:
        self.ready = False
        self.readiness.mark(False)
        self.metrics.ready.set(0)
        if self._loader is not None:
            await asyncio.gather(self._loader, return_exceptions=True)
        await self.batcher.close()  # answers every accepted request before returning
        self.table_reloads.stop()
        self.backend.close()
        worker_exit()

    def _load(self) -> None:
        try:
            self.table_reloads.loading()
            self.backend.load()
            self.metrics.backend_info.labels(self.backend.name, self.backend.device).set(1)
            if self.backend.name == "gpu":
                self.metrics.watch_gpu(self.backend.gpu_index, self.backend.pci_bus_id)
                stats = getattr(getattr(self.backend, "dispatcher", None), "fast_path_stats", None)
                if stats is not None:
                    self.metrics.watch_fast_path(stats)
            self.not_ready_reason = "warm-up GEMM"
            warmup_check(self.backend)
        except Exception as error:
            self.not_ready_reason = f"backend failed to load: {type(error).__name__}: {error}"
            log.exception("backend failed to load; the service stays not ready")
            return
        # ~200k long-lived objects exist now (torch, the backend, FastAPI): a later full collection walking them all
        # paused the server for ~200 ms under load (the P99 spikes of the CPU ramps). Freeze them out of the GC.
        gc.collect()
        gc.freeze()
        self.table_reloads.start()  # follow reloads made on other workers from now on
        self.ready = True
        self.not_ready_reason = ""
        self.readiness.mark(True)
        self.metrics.ready.set(1)
        log.info("ready: backend %s on %s", self.backend.name, self.backend.device)

    def _run_batch(self, jobs: list[Job]) -> list[JobResult | Exception]:
        """Runs on the batcher's thread: the backend, plus the per-batch and per-request metrics."""
        started = time.perf_counter()
        results = self.backend.run_batch(jobs)
        metrics = self.metrics
        metrics.child(metrics.compute, self.backend.name).observe(time.perf_counter() - started)
        for phase, seconds in self.backend.phases.items():
            metrics.child(metrics.batch_phase, phase).observe(seconds)
        for job, result in zip(jobs, results):
            if isinstance(result, JobResult):
                metrics.child(metrics.kernel_selections, result.selection.kernel).inc()
                if result.selection.fallback:
                    metrics.child(metrics.fallbacks, result.selection.fallback).inc()
                    if result.selection.fallback in UNTUNED_REASONS and result.gemm is not None:
                        self.untuned.add(*result.gemm, job.b_layout, job.acc)
        return results

    def health(self) -> tuple[bool, str]:
        """(ready, why not) for /health/ready: this worker, and with several workers all of them."""
        if not self.ready:
            return False, self.not_ready_reason
        waiting = self.readiness.others_waiting()
        if waiting:
            return False, f"{waiting} of {self.settings.workers} worker processes not ready yet"
        return True, ""

    def sync_operand_gauges(self) -> None:
        self.metrics.resident_operands.set(len(self.registry))
        self.metrics.resident_operand_bytes.set(self.registry.used_bytes)


def warmup_check(backend: Backend) -> None:
    """Run real GEMMs through the backend (both layouts) and compare with float64; raise on any mismatch."""
    rng = np.random.default_rng(0)
    jobs, references = [], []
    for m, n, k in WARMUP_SHAPES:
        for layout in ("row", "col"):
            a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
            b = rng.uniform(-1, 1, (k, n) if layout == "row" else (n, k)).astype(np.float16)
            b64 = b.astype(np.float64)
            jobs.append(Job(a, b, layout, "f32"))
            references.append(a.astype(np.float64) @ (b64 if layout == "row" else b64.T))
    for job, result, reference in zip(jobs, backend.run_batch(jobs), references):
        if isinstance(result, Exception):
            raise RuntimeError(f"warm-up GEMM {job.m}x{job.n}x{job.k} ({job.b_layout}) failed: {result}")
        error = relative_error(result.c, reference)
        if not error <= WARMUP_TOLERANCE["f32"]:
            raise RuntimeError(f"warm-up GEMM {job.m}x{job.n}x{job.k} ({job.b_layout}) kernel "
                               f"{result.selection.kernel}: relative error {error:.3g} > {WARMUP_TOLERANCE['f32']}")


def relative_error(c: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(c.astype(np.float64) - reference) / np.linalg.norm(reference))
