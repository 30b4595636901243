"""Prometheus metrics with the names of Contract 4, on a registry per app (tests build many apps), plus the ASGI
middleware that counts requests and times them by route template."""
from __future__ import annotations

import logging
import time
from typing import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .workers import forget_dead_workers, multiprocess_metrics

log = logging.getLogger(__name__)

# Contract 1; the kernel library's tuple wins when it is importable
FALLBACK_REASONS = ("no_tuned_kernel", "unaligned", "kernel_error", "quarantined", "not_built", "cpu_backend",
                    "canary_mismatch", "tuned_elsewhere")
REJECT_REASONS = ("queue_full", "timeout", "too_large", "unauthorized", "invalid")
# dense around the 50 ms P99 objective, so histogram_quantile is accurate where the alert looks, and around the
# load goals' 10 and 20 ms (a 10-20 ms bucket made a client-side 8 ms P99 read as 13 ms on the H200, session 8)
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03, 0.04, 0.045,
                   0.05, 0.055, 0.06, 0.07, 0.08, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FAST_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)
BATCH_BUCKETS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32)


def fallback_reasons() -> tuple[str, ...]:
    try:
        from kernels.dispatch import FALLBACK_REASONS as reasons
        return tuple(reasons)
    except Exception:  # the kernel library is optional for the service
        return FALLBACK_REASONS


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Counter("hgemm_requests", "HTTP requests", ["endpoint", "method", "status"], registry=r)
        self.request_duration = Histogram("hgemm_request_duration_seconds", "HTTP request latency", ["endpoint"],
                                          buckets=LATENCY_BUCKETS, registry=r)
        self.queue_wait = Histogram("hgemm_queue_wait_seconds", "time from enqueue to batch dispatch",
                                    buckets=FAST_BUCKETS, registry=r)
        self.compute = Histogram("hgemm_compute_seconds", "compute time per batch", ["backend"], buckets=FAST_BUCKETS,
                                 registry=r)
        self.batch_phase = Histogram(
            "hgemm_batch_phase_seconds", "where a batch's time went on the batch thread (gpu backend): stage_in, "
            "launch, sync, stage_out, off_cpu (GIL waits and blocking)", ["phase"], buckets=FAST_BUCKETS, registry=r)
        self.batch_size = Histogram("hgemm_batch_size", "requests per batch", buckets=BATCH_BUCKETS, registry=r)
        # multiprocess_mode: how /metrics combines the workers' values (HGEMM_WORKERS > 1; ignored with one process)
        self.queue_depth = Gauge("hgemm_queue_depth", "requests waiting in the batcher queue", registry=r,
                                 multiprocess_mode="livesum")
        self.queue_capacity = Gauge("hgemm_queue_capacity", "batcher queue capacity", registry=r,
                                    multiprocess_mode="livesum")
        self.inflight = Gauge("hgemm_inflight_requests", "/v1 requests being served", registry=r,
                              multiprocess_mode="livesum")
        self.fallbacks = Counter("hgemm_fallbacks", "GEMMs that fell back, by reason", ["reason"], registry=r)
        self.kernel_selections = Counter("hgemm_kernel_selections", "GEMM requests by kernel", ["kernel"], registry=r)
        self.rejected = Counter("hgemm_rejected", "rejected requests by reason", ["reason"], registry=r)
        # the operand gauges describe the shared store: the worker that changed it last is right
        self.resident_operands = Gauge("hgemm_resident_operands", "resident operands", registry=r,
                                       multiprocess_mode="mostrecent")
        self.resident_operand_bytes = Gauge("hgemm_resident_operand_bytes", "bytes of resident operands", registry=r,
                                            multiprocess_mode="mostrecent")
        self.resident_budget_bytes = Gauge("hgemm_resident_budget_bytes", "resident operand budget", registry=r,
                                           multiprocess_mode="livemax")
        self.ready = Gauge("hgemm_ready", "1 when the backend is loaded and the warm-up GEMM passed (every worker)",
                           registry=r, multiprocess_mode="livemin")
        self.backend_info = Gauge("hgemm_backend_info", "the serving backend", ["backend", "device"], registry=r,
                                  multiprocess_mode="livemax")
        self.workers = Gauge("hgemm_workers", "server processes serving (each sets 1; HGEMM_WORKERS)", registry=r,
                             multiprocess_mode="livesum")
        self.workers.set(1)
        self._collectors: list = []  # read at scrape time (NVML, the fast path)
        self._children: dict[tuple, object] = {}
        for reason in fallback_reasons():
            self.child(self.fallbacks, reason)
        for reason in REJECT_REASONS:
            self.child(self.rejected, reason)

    def child(self, metric, *labels: str):
        """`metric.labels(*labels)`, cached: labels() builds a key and takes a lock on every call, which the hot path
        pays per request. The label sets are bounded (route templates, statuses, kernels, reasons)."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)  # a race only binds the same child twice
        return child

    def request_done(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        self.child(self.requests, endpoint, method, str(status)).inc()
        self.child(self.request_duration, endpoint).observe(seconds)

    # batcher observer
    def on_queue_depth(self, depth: int) -> None:
        self.queue_depth.set(depth)

    def on_batch(self, size: int, queue_waits_s: Sequence[float]) -> None:
        self.batch_size.observe(size)
        for wait in queue_waits_s:
            self.queue_wait.observe(wait)

    def watch_gpu(self, gpu_index: int, pci_bus_id: str | None = None) -> None:
        """GPU utilization and memory from NVML, read at scrape time."""
        try:
            self._register(NvmlCollector(gpu_index, pci_bus_id))
        except Exception as error:  # no NVML (driver too old, container without it): the rest still works
            log.warning("NVML unavailable, no GPU utilization metrics: %s", error)

    def watch_fast_path(self, stats) -> None:
        """The dispatcher's C fast path (hits, misses, entries), read at scrape time; stats() -> dict or None."""
        self._register(FastPathCollector(stats))

    def _register(self, collector) -> None:
        self.registry.register(collector)
        self._collectors.append(collector)

    def render(self) -> tuple[bytes, str]:
        if not multiprocess_metrics():
            return generate_latest(self.registry), CONTENT_TYPE_LATEST
        # every worker's metric files, summed; the scrape-time collectors as this worker reads them (NVML sees the
        # whole GPU; the fast-path counts are this worker's)
        forget_dead_workers()
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        for collector in self._collectors:
            registry.register(collector)
        return generate_latest(registry), CONTENT_TYPE_LATEST


class NvmlCollector:
    def __init__(self, gpu_index: int, pci_bus_id: str | None = None):
        import pynvml
        pynvml.nvmlInit()
        self.nvml = pynvml
        self.index = gpu_index
        self.handle = None
        if pci_bus_id:
            try:
                self.handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            except pynvml.NVMLError:
                self.handle = None
        if self.handle is None:
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(gpu_index)

    def collect(self):
        label = [str(self.index)]
        util = GaugeMetricFamily("hgemm_gpu_utilization_ratio", "GPU utilization (NVML), 0..1", labels=["gpu"])
        used = GaugeMetricFamily("hgemm_gpu_memory_used_bytes", "GPU memory used (NVML)", labels=["gpu"])
        total = GaugeMetricFamily("hgemm_gpu_memory_total_bytes", "GPU memory total (NVML)", labels=["gpu"])
        try:
            rates = self.nvml.nvmlDeviceGetUtilizationRates(self.handle)
            memory = self.nvml.nvmlDeviceGetMemoryInfo(self.handle)
        except Exception as error:
            log.warning("NVML read failed: %s", error)
            return []
        util.add_metric(label, rates.gpu / 100.0)
        used.add_metric(label, float(memory.used))
        total.add_metric(label, float(memory.total))
        return [util, used, total]


class FastPathCollector:
    """GEMMs served by the C fast path (`hit`) or handed to the Python path (`miss`: first call of a shape or stream,
    operands it does not serve, canary samples), and the launches it holds. A falling hit ratio under steady traffic
    means shapes or streams keep changing, or operands arrive non-contiguous or misaligned."""

    def __init__(self, stats):
        self.stats = stats

    def collect(self):
        try:
            stats = self.stats()
        except Exception as error:  # metrics must never break a scrape
            log.warning("fast path stats failed: %s", error)
            return []
        if not stats:
            return []
        calls = CounterMetricFamily("hgemm_fastpath_calls", "GEMMs by C fast path outcome", labels=["result"])
        calls.add_metric(["hit"], float(stats["hits"]))
        calls.add_metric(["miss"], float(stats["misses"]))
        entries = GaugeMetricFamily("hgemm_fastpath_entries", "prepared launches held by the C fast path")
        entries.add_metric([], float(stats["entries"]))
        return [calls, entries]


class RequestMetricsMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware overhead on the hot path): status and latency per route template."""

    def __init__(self, app, metrics: Metrics, routes=None):
        self.app = app
        self.metrics = metrics
        self.routes = routes  # callable -> the app's routes: labels requests answered before routing (401)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status = {"code": 500}
        counted = scope["path"].startswith("/v1/")
        if counted:
            self.metrics.inflight.inc()

        async def send_with_status(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            if counted:
                self.metrics.inflight.dec()
            route = scope.get("route") or self._match(scope)
            endpoint = getattr(route, "path", None) or "unmatched"  # bounded label set: templates only
            self.metrics.request_done(endpoint, scope["method"], status["code"], time.perf_counter() - started)

    def _match(self, scope):
        from starlette.routing import Match
        for route in self.routes() if self.routes else ():
            if route.matches(scope)[0] == Match.FULL:
                return route
        return None
