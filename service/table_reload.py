"""`POST /v1/kernels/tables/reload`: serve re-read tuned tables without a restart, so resident operands, queues and
metrics survive. The tables are the committed ones overlaid with `HGEMM_EXTRA_TABLES`, read again from disk: after
`python -m tuner.tune --grid <GET /v1/kernels/untuned?format=grid> --tables-dir DIR` writes tables into such a
directory, a reload serves them. Tables that do not validate are refused and the old ones stay.

With several worker processes the request reaches one of them. It reloads, then bumps a generation number in the
shared folder (`tables/generation`); every worker polls that number (every POLL_S) and reloads when it is behind,
then writes the generation it serves to `tables/<pid>.json`. The answer waits up to WAIT_S for the other live
workers and says how many serve the new tables. A worker started later reads the tables from disk anyway.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from .workers import alive, exclusive, write_atomic

log = logging.getLogger(__name__)

POLL_S = 0.25
WAIT_S = 5.0


class TablesUnavailable(Exception):
    """This backend serves no tuned tables (the CPU backend, or a GPU backend without the kernel library)."""


class TableReloads:
    def __init__(self, reload: Callable[[], dict], shared_dir: Path | None = None, workers: int = 1,
                 poll_s: float = POLL_S):
        self._reload = reload              # re-reads and serves the tables; returns a summary; raises when it cannot
        self.directory = shared_dir / "tables" if shared_dir else None
        self.workers = workers
        self.poll_s = poll_s
        self.worker = os.getpid()          # names this process's file in the shared folder
        self.served = 0                    # the generation this process serves
        self._lock = threading.Lock()      # one reload at a time in this process (endpoint and watcher)
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # ---- life cycle (ServiceState) ----------------------------------------------------------------------------
    def loading(self) -> None:
        """Just before the backend reads its tables: they will be at least this generation's (a reload bumping it
        while the backend loads is followed once the watcher runs)."""
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.served = self._generation()

    def start(self) -> None:
        """Once the backend has loaded: say which generation this worker serves and follow later reloads."""
        if self.directory is None:
            return
        self._acknowledge(None)
        self._watcher = threading.Thread(target=self._watch, name="table-reloads", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        if self.directory is not None:
            (self.directory / f"{self.worker}.json").unlink(missing_ok=True)

    # ---- the endpoint -----------------------------------------------------------------------------------------
    def reload_now(self) -> dict:
        """Reload here (an error propagates and nothing changes elsewhere), then have every worker follow."""
        with self._lock:
            summary = self._reload()
            generation = self._bump() if self.directory is not None else self.served + 1
            self.served = generation
            self._acknowledge(None)
        serving, failed = self._wait_for(generation)
        return {"tables": summary, "generation": generation,
                "workers": {"serving": serving, "of": self.workers, "failed": failed}}

    # ---- the other workers ------------------------------------------------------------------------------------
    def poll(self) -> None:
        """Reload if another worker bumped the generation (the watcher calls this every poll_s)."""
        generation = self._generation()
        if generation <= self.served:
            return
        with self._lock:
            error = None
            try:
                self._reload()
            except Exception as exc:  # noqa: BLE001 - the old tables keep serving; the reloading worker is told
                error = f"{type(exc).__name__}: {exc}"
                log.exception("tables of generation %d not reloaded in worker %d", generation, self.worker)
            self.served = generation
            self._acknowledge(error)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                self.poll()
            except OSError:
                log.exception("table reload watcher")

    # ---- the shared folder ------------------------------------------------------------------------------------
    def _generation(self) -> int:
        try:
            return int((self.directory / "generation").read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def _bump(self) -> int:
        with exclusive(self.directory / "lock"):   # two workers reloading at once get two generations
            generation = self._generation() + 1
            write_atomic(self.directory / "generation", str(generation))
        return generation

    def _acknowledge(self, error: str | None) -> None:
        if self.directory is not None:
            write_atomic(self.directory / f"{self.worker}.json", json.dumps({"generation": self.served, "error": error}))

    def _acks(self) -> dict[int, dict]:
        acks = {}
        for path in self.directory.glob("*.json"):
            if path.stem.isdigit() and alive(int(path.stem)):
                try:
                    acks[int(path.stem)] = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
        return acks

    def _wait_for(self, generation: int) -> tuple[int, list[str]]:
        """(workers serving `generation`, errors of those that failed to), waiting up to WAIT_S."""
        if self.directory is None:
            return 1, []
        deadline = time.monotonic() + WAIT_S
        while True:
            acks = [ack for ack in self._acks().values() if ack.get("generation", 0) >= generation]
            failed = [ack["error"] for ack in acks if ack.get("error")]
            serving = len(acks) - len(failed)
            if len(acks) >= self.workers or time.monotonic() >= deadline:
                return serving, failed
            time.sleep(self.poll_s / 2)

