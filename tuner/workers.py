"""Spreading shape jobs over GPUs: one worker process per visible GPU, or Ray tasks on a cluster's GPU workers.

The coordinator keeps one job in flight per slot. Each job is submitted with a fresh snapshot of the shared model,
so later shapes start from everything earlier ones taught; results come back in completion order and are merged
and stored at once (resumable). Ray is optional and imported only when a Ray address is given."""
from __future__ import annotations

import multiprocessing
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Callable, Iterable


def visible_gpus(spec: str | None = None) -> list[int]:
    """GPU ids: an explicit "0,1,3", else every device torch sees (none on a CPU machine)."""
    if spec:
        return [int(x) for x in spec.split(",") if x.strip()]
    try:
        import torch
    except ImportError:
        return []
    return list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []


def inline_submit(fn: Callable[[dict], dict]) -> Callable[[object, dict], Future]:
    """Run the job in this process (one GPU, tests): a Future that is already done."""
    def submit(slot, payload: dict) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(payload))
        except Exception as exc:  # noqa: BLE001 - delivered through the future like a worker's failure
            fut.set_exception(exc)
        return fut
    return submit


class LocalPool:
    """One single-process executor per GPU id (spawned: CUDA cannot be forked), so a worker stays on its GPU."""

    def __init__(self, gpu_ids: list[int], fn: Callable[[dict], dict]):
        ctx = multiprocessing.get_context("spawn")
        self.fn, self.slots = fn, list(gpu_ids)
        self.executors = {g: ProcessPoolExecutor(max_workers=1, mp_context=ctx) for g in gpu_ids}

    def submit(self, slot, payload: dict) -> Future:
        return self.executors[slot].submit(self.fn, dict(payload, gpu=slot))

    def close(self) -> None:
        for ex in self.executors.values():
            ex.shutdown(wait=True, cancel_futures=True)


class RayPool:
    """Shape jobs as Ray tasks, each holding `gpus_per_task` GPUs (Ray sets CUDA_VISIBLE_DEVICES for the task, so the
    job uses its device 0). `slots` defaults to the cluster's GPU count / gpus_per_task."""

    def __init__(self, address: str, fn: Callable[[dict], dict], gpus_per_task: float = 1.0,
                 slots: int | None = None, init_kwargs: dict | None = None):
        import ray  # optional extra: `pip install tuned-hgemm[ray]`

        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, ignore_reinit_error=True, **(init_kwargs or {}))
        self.remote = ray.remote(num_gpus=gpus_per_task)(fn)
        if slots is None:
            gpus = ray.cluster_resources().get("GPU", 0)
            slots = int(gpus // gpus_per_task) if gpus_per_task else 0
        if slots < 1:
            raise RuntimeError("the Ray cluster has no GPU slots for these tasks")
        self.slots = list(range(slots))

    def submit(self, slot, payload: dict) -> Future:
        return self.remote.remote(dict(payload, gpu=None)).future()

    def close(self) -> None:
        pass


def schedule(jobs: Iterable[dict], slots: list, submit: Callable[[object, dict], Future],
             make_payload: Callable[[dict], dict], on_done: Callable[[dict, dict], None],
             on_error: Callable[[dict, BaseException], None] | None = None) -> int:
    """Keep every slot busy; `make_payload(job)` is called at submit time (fresh model snapshot); `on_done(job,
    result)` in completion order. A failed job is reported to `on_error` (or raised when there is none) and the
    others go on. Returns the number of jobs completed."""
    pending = iter(jobs)
    free, inflight, completed = list(slots), {}, 0
    exhausted = False
    while True:
        while free and not exhausted:
            job = next(pending, None)
            if job is None:
                exhausted = True
                break
            slot = free.pop(0)
            inflight[submit(slot, make_payload(job))] = (slot, job)
        if not inflight:
            return completed
        done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
        for fut in done:
            slot, job = inflight.pop(fut)
            free.append(slot)
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001
                if on_error is None:
                    raise
                on_error(job, exc)
                continue
            on_done(job, result)
            completed += 1

