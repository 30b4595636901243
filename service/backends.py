"""Where GEMMs run. Both backends take a batch of jobs, fuse jobs that share a resident operand (jobs.fuse), run one
GEMM per group and split the results back per job.

- GpuBackend: torch CUDA tensors; the tuned kernels through `kernels.get_dispatcher()`/`Dispatcher` (Contract 1) or,
  while the kernel library is not importable, torch's matmul (cuBLAS) with fallback `not_built`. Groups are spread over
  a pool of CUDA streams (one per slot), inputs go up through pinned staging buffers, and the batch synchronizes once.
- CpuBackend: torch on the CPU: fp16 in, fp32 accumulation, fp16 out (for acc=f16 too: it reports acc_computed=f32).
"""
from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from .jobs import Group, Job, JobResult, Selection, fuse
from .table_reload import TablesUnavailable

log = logging.getLogger(__name__)

ALIGN = 256  # bytes: staging slices start on this boundary
SMALL_BATCH_MACS = 1 << 22  # below this many multiply-adds per batch the CPU backend stays on the batch thread


PHASES = ("stage_in", "launch", "sync", "stage_out", "off_cpu")


class Backend:
    name = "base"
    device = "none"
    # seconds per phase of the last batch (GpuBackend; empty for others), read on the batch thread right after
    # run_batch: stage_in (copies into pinned buffers), launch (H2D + GEMM + D2H enqueued), sync (waiting for the
    # streams), stage_out (copies out of pinned buffers), off_cpu (wall minus the thread's CPU time: GIL waits, blocking)
    phases: dict[str, float] = {}

    def load(self) -> None:
        """Heavy initialization (CUDA context, kernel tables); runs once, off the event loop."""

    def close(self) -> None:
        pass

    def resident(self, b: np.ndarray) -> Any:
        """Copy a B operand to where GEMMs run and keep it there."""
        raise NotImplementedError

    def resident_nbytes(self, handle: Any) -> int:
        return handle.numel() * handle.element_size()

    def select(self, m: int, n: int, k: int, b_layout: str, acc: str) -> Selection:
        raise NotImplementedError

    def acc_computed(self, acc: str) -> str:
        return acc

    def info(self) -> dict:
        return {"backend": self.name, "device": self.device}

    def reload_tables(self) -> dict:
        """Re-read the tuned tables (the committed ones + HGEMM_EXTRA_TABLES) and serve them from the next GEMM on;
        a summary of what is served now. Raises TablesUnavailable, or ValueError for tables that do not validate."""
        raise TablesUnavailable(f"the {self.name} backend serves no tuned tables")

    def run_batch(self, jobs: list[Job]) -> list[JobResult | Exception]:
        groups = fuse(jobs)
        outcomes = self._run_groups(groups)
        results: list[JobResult | Exception] = [None] * len(jobs)  # type: ignore[list-item]
        for group, outcome in zip(groups, outcomes):
            if isinstance(outcome, Exception):
                for index in group.members:
                    results[index] = outcome
                continue
            c, selection = outcome
            row = 0
            for index in group.members:
                m = jobs[index].m
                computed = selection.acc or self.acc_computed(group.acc)
                results[index] = JobResult(c[row:row + m], selection, self.name, computed,
                                           batch_size=len(jobs), fused=len(group.members),
                                           gemm=(group.m, group.n, group.k))
                row += m
        return results

    def _run_groups(self, groups: list[Group]) -> list[tuple[np.ndarray, Selection] | Exception]:
        raise NotImplementedError


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self, num_threads: int = 8):
        self.workers = max(1, min(num_threads, os.cpu_count() or 1))
        self.device = f"cpu ({os.cpu_count()} cores, {self.workers} batch threads)"
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="hgemm-cpu")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def resident(self, b: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.array(b, dtype=np.float16, copy=True))

    def select(self, m, n, k, b_layout, acc) -> Selection:
        return Selection("cpu_matmul", "cpu_backend")

    def acc_computed(self, acc: str) -> str:
        return "f32"  # fp32 accumulation for both: at least as accurate as the f16 contract asks

    def _run_groups(self, groups):
        if len(groups) == 1 or sum(g.m * g.k * g.n for g in groups) < SMALL_BATCH_MACS:
            return [self._run_group(group) for group in groups]  # a thread hop costs more than it saves
        return list(self._pool.map(self._run_group, groups))

    def _run_group(self, group: Group):
        try:
            a = np.concatenate(group.a_parts) if len(group.a_parts) > 1 else group.a_parts[0]
            a32 = torch.from_numpy(a).float()
            b32 = torch.as_tensor(group.b).float()
            c = a32 @ (b32 if group.b_layout == "row" else b32.T)
            return c.half().numpy(), self.select(a.shape[0], c.shape[1], a.shape[1], group.b_layout, group.acc)
        except Exception as error:  # reported to this group's requests only
            log.exception("cpu gemm failed")
            return error


class _PinnedArena:
    """A growable pinned host buffer, carved into aligned slices for one batch (reset between batches, after the
    batch's synchronization, so no copy still in flight reads a reused slice)."""

    def __init__(self):
        self.buffer = torch.empty(0, dtype=torch.uint8)
        self.offset = 0

    def reserve(self, nbytes: int) -> None:
        self.offset = 0
        if self.buffer.numel() < nbytes:
            self.buffer = torch.empty(max(nbytes, 2 * self.buffer.numel()), dtype=torch.uint8, pin_memory=True)

    def take(self, rows: int, cols: int) -> torch.Tensor:
        nbytes = rows * cols * 2
        view = self.buffer[self.offset:self.offset + nbytes].view(torch.float16).view(rows, cols)
        self.offset += _aligned(nbytes)
        return view


def _aligned(nbytes: int) -> int:
    return (nbytes + ALIGN - 1) // ALIGN * ALIGN


class GpuBackend(Backend):
    name = "gpu"

    def __init__(self, num_streams: int = 8, canary_rate: float = 0.0):
        self.num_streams = num_streams
        self.canary_rate = canary_rate
        self.dispatcher = None
        self.dispatcher_error: str | None = None

    def load(self) -> None:
        if not torch.cuda.is_available():
            raise RuntimeError("HGEMM_BACKEND=gpu but torch sees no CUDA device")
        self.torch_device = torch.device("cuda", torch.cuda.current_device())
        props = torch.cuda.get_device_properties(self.torch_device)
        self.device = f"{props.name} (sm{props.major}{props.minor})"
        self.gpu_index = self.torch_device.index
        # NVML numbers GPUs without CUDA_VISIBLE_DEVICES: the PCI bus id names the same GPU in both
        bus = getattr(props, "pci_bus_id", None)
        self.pci_bus_id = (f"{getattr(props, 'pci_domain_id', 0):08x}:{bus:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
                           if bus is not None else None)
        self.streams = [torch.cuda.Stream(self.torch_device) for _ in range(self.num_streams)]
        self.inputs = [_PinnedArena() for _ in self.streams]
        self.outputs = [_PinnedArena() for _ in self.streams]
        self.dispatcher = self._load_dispatcher()

    def _load_dispatcher(self):
        """The kernel library is imported lazily: without it the service still runs, on cuBLAS via torch."""
        try:
            import kernels
            if hasattr(kernels, "get_dispatcher"):
                dispatcher = kernels.get_dispatcher()
            else:
                from kernels.dispatch import Dispatcher
                dispatcher = Dispatcher.default(device=None)
        except Exception as error:  # ImportError while the library is absent, or a broken table
            self.dispatcher_error = f"{type(error).__name__}: {error}"
            log.warning("kernel library unavailable, serving cuBLAS via torch: %s", self.dispatcher_error)
            return None
        if hasattr(dispatcher, "canary_rate"):
            dispatcher.canary_rate = self.canary_rate
        return dispatcher

    def resident(self, b: np.ndarray) -> torch.Tensor:
        with torch.cuda.device(self.torch_device):
            tensor = torch.from_numpy(np.ascontiguousarray(b)).to(self.torch_device)
            torch.cuda.current_stream().synchronize()
        return tensor

    def select(self, m, n, k, b_layout, acc) -> Selection:
        if self.dispatcher is None:
            return Selection("cublas", "not_built")
        sel = self.dispatcher.select(m, n, k, b_layout=b_layout, acc=acc)
        return Selection(sel.kernel, sel.fallback, sel.acc)

    def acc_computed(self, acc: str) -> str:
        return acc if self.dispatcher is not None else "f32"  # torch's fp16 matmul accumulates in fp32

    def reload_tables(self) -> dict:
        if self.dispatcher is None or not hasattr(self.dispatcher, "set_tables"):
            raise TablesUnavailable(f"no kernel library loaded ({self.dispatcher_error}): cuBLAS serves every shape")
        from kernels.tuned_tables import load_default_tables

        # TableError (a ValueError): the old tables stay
        tables = load_default_tables(self.dispatcher.arch, gpu=getattr(self.dispatcher, "gpu", ""))
        self.dispatcher.set_tables(tables)
        return _table_summary(tables)

    def info(self) -> dict:
        info = super().info()
        info["kernel_library"] = "loaded" if self.dispatcher is not None else f"unavailable ({self.dispatcher_error})"
        return info

    def _gemm(self, a: torch.Tensor, b: torch.Tensor, b_layout: str, acc: str):
        """C and the Selection that really produced it (a kernel may fall back inside the call)."""
        if self.dispatcher is not None:
            c, sel = self.dispatcher.run(a, b, b_layout=b_layout, acc=acc)
            return c, Selection(sel.kernel, sel.fallback, sel.acc)
        return a @ (b if b_layout == "row" else b.t()), Selection("cublas", "not_built")

    def _run_groups(self, groups):
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        phases = dict.fromkeys(PHASES, 0.0)
        slots = [[] for _ in self.streams]
        for index, group in enumerate(groups):
            slots[index % len(self.streams)].append(index)
        for slot, members in enumerate(slots):  # size the staging buffers before writing any of them
            self.inputs[slot].reserve(sum(self._input_bytes(groups[i]) for i in members))
            self.outputs[slot].reserve(sum(_aligned(groups[i].m * groups[i].n * 2) for i in members))
        launched: list[Any] = [None] * len(groups)
        with torch.cuda.device(self.torch_device):
            for slot, members in enumerate(slots):
                for index in members:
                    launched[index] = self._launch(groups[index], slot, phases)
            synced = time.perf_counter()
            for slot, members in enumerate(slots):
                if members:
                    self.streams[slot].synchronize()  # once per batch and stream, not once per request
        copied = time.perf_counter()
        phases["sync"] = copied - synced
        outcomes = []
        for item in launched:
            if isinstance(item, Exception):
                outcomes.append(item)
            else:
                host_c, selection = item
                outcomes.append((host_c.numpy().copy(), selection))  # the pinned slice is reused next batch
        end = time.perf_counter()
        phases["stage_out"] = end - copied
        phases["off_cpu"] = max(0.0, (end - wall0) - (time.thread_time() - cpu0))
        self.phases = phases
        return outcomes

    @staticmethod
    def _input_bytes(group: Group) -> int:
        nbytes = sum(_aligned(part.nbytes) for part in group.a_parts)
        if isinstance(group.b, np.ndarray):
            nbytes += _aligned(group.b.nbytes)
        return nbytes

    def _launch(self, group: Group, slot: int, phases: dict[str, float]):
        started = time.perf_counter()
        try:
            stream = self.streams[slot]
            m, k, n = group.m, group.k, group.n
            host_a = self.inputs[slot].take(m, k)
            row = 0
            for part in group.a_parts:  # fused requests are stacked straight into the pinned buffer
                host_a.numpy()[row:row + part.shape[0]] = part
                row += part.shape[0]
            host_b = None
            if isinstance(group.b, np.ndarray):
                host_b = self.inputs[slot].take(*group.b.shape)
                host_b.numpy()[...] = group.b
            host_c = self.outputs[slot].take(m, n)
            staged = time.perf_counter()
            phases["stage_in"] += staged - started
            with torch.cuda.stream(stream):
                a = host_a.to(self.torch_device, non_blocking=True)
                b = group.b if host_b is None else host_b.to(self.torch_device, non_blocking=True)
                c, selection = self._gemm(a, b, group.b_layout, group.acc)
                host_c.copy_(c, non_blocking=True)
            phases["launch"] += time.perf_counter() - staged
            return host_c, selection
        except Exception as error:
            log.exception("gpu gemm failed")
            return error


def _table_summary(tables: dict) -> dict:
    """{acc: {"entries", "source"}} of the tables a dispatcher serves (source: the files, overlays included)."""
    return {acc: {"entries": len(getattr(table, "entries", {})), "source": str(getattr(table, "source", ""))}
            for acc, table in sorted(tables.items())}


def make_backend(settings) -> Backend:
    choice = settings.backend
    if choice == "auto":
        choice = "gpu" if torch.cuda.is_available() else "cpu"
    if choice == "gpu":
        return GpuBackend(num_streams=settings.num_streams, canary_rate=settings.canary_rate)
    return CpuBackend(num_threads=settings.num_streams)
