"""Several server processes on one port (HGEMM_WORKERS > 1). One Python process tops out at ~1850 resident GEMM
requests/s on the H200 host: its event loop and its batch thread take turns on one GIL (session 7: a shorter switch
interval only made it worse). uvicorn's supervisor starts N workers on one listening socket, each with its own event
loop, batcher and CUDA context. What they must agree on lives in one shared directory (HGEMM_SHARED_DIR):

  operands/   resident operands (service/operand_store.py): registered on one worker, used on any
  metrics/    prometheus_client's multiprocess files (PROMETHEUS_MULTIPROC_DIR): /metrics on any worker sums them all
  untuned/    each worker's untuned-shape counts (service/untuned.py), merged by GET /v1/kernels/untuned
  ready/      one file per ready worker: /health/ready says ready only when all of them are
  tables/     the tuned tables' reload generation and what each worker serves (service/table_reload.py)
"""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

PARTS = ("operands", "metrics", "untuned", "ready", "tables")


def prepare(shared_dir: str = "") -> Path:
    """Before the workers start: the shared directory, emptied (operands and counts of an earlier server died with
    its processes; stale metric files would be summed in), and the environment the workers inherit."""
    root = Path(shared_dir) if shared_dir else Path(tempfile.mkdtemp(prefix="hgemm-workers-"))
    for part in PARTS:
        shutil.rmtree(root / part, ignore_errors=True)
        (root / part).mkdir(parents=True)
    os.environ["HGEMM_SHARED_DIR"] = str(root)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(root / "metrics")
    return root


def write_atomic(path: Path, text: str) -> None:
    """Replace a shared file so that another worker reads the old content or the new, never half of either."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(text)
    os.replace(tmp, path)


@contextmanager
def exclusive(lock_path: Path):
    """One holder at a time across the worker processes (and threads: each takes its own file description)."""
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def multiprocess_metrics() -> bool:
    """prometheus_client keeps values in files (read at import time): true in workers started after prepare()."""
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def forget_dead_workers() -> None:
    """A worker that died without stopping (killed, crashed: uvicorn starts another) never marked itself dead, so its
    live gauges (in flight, queue depth, ready, workers) would count forever. Called at scrape time."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return
    from prometheus_client import multiprocess

    pids = set()
    for path in Path(directory).glob("gauge_live*_*.db"):
        tail = path.stem.rsplit("_", 1)[1]
        if tail.isdigit():
            pids.add(int(tail))
    for pid in pids:
        if not alive(pid):
            multiprocess.mark_process_dead(pid, directory)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class Readiness:
    """Whether every worker is ready, not just the one a health probe reaches: a load balancer or a load test that
    starts on the first 200 would otherwise send requests to workers still loading (503)."""

    def __init__(self, shared_dir: Path | None, workers: int):
        self.directory = shared_dir / "ready" if shared_dir else None
        self.workers = workers
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def mark(self, ready: bool) -> None:
        if self.directory is None:
            return
        marker = self.directory / str(os.getpid())
        if ready:
            marker.touch()
        else:
            marker.unlink(missing_ok=True)

    def others_waiting(self) -> int:
        """How many of the configured workers are not (yet) ready; 0 without a shared folder."""
        if self.directory is None:
            return 0
        ready = sum(1 for path in self.directory.iterdir() if path.name.isdigit() and alive(int(path.name)))
        return max(0, self.workers - ready)


def worker_exit() -> None:
    """A stopping worker's live gauges (in-flight, queue depth, ready) must stop counting."""
    if multiprocess_metrics():
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(os.getpid())
