"""The shapes worth tuning next: GEMMs the service ran on cuBLAS because the tuned tables do not hold their shape
(fallback `no_tuned_kernel`) or hold a cuBLASLt algorithm this GPU's cuBLAS lacks (`tuned_elsewhere`: tables tuned
on another card), counted by request. `GET /v1/kernels/untuned` lists them; `?format=grid` gives the
`M_N_K` lines `python -m tuner.tune --grid` reads, and the tables it writes are served with `HGEMM_EXTRA_TABLES`
(docs/dispatch.md, "Tuning the shapes you serve"). A fused GEMM is counted under its own (stacked) M. With several
worker processes each one publishes its counts to a shared folder (at most twice a second) and the listing sums them."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from .workers import write_atomic

UNTUNED_REASONS = ("no_tuned_kernel", "tuned_elsewhere")


PUBLISH_DELAY_S = 0.5


class UntunedShapes:
    def __init__(self, capacity: int = 4096, shared_dir: str | os.PathLike | None = None, worker: str | None = None):
        self.capacity = capacity
        self.overflow = 0  # requests of shapes first seen while `capacity` shapes were already tracked
        self._counts: dict[tuple[int, int, int, str, str], int] = {}
        self._lock = threading.Lock()  # the batch thread adds, the event loop reads
        self.shared_dir = Path(shared_dir) if shared_dir else None
        self._own_file = self.shared_dir / f"{worker or os.getpid()}.json" if self.shared_dir else None
        self._publish_pending = False

    def add(self, m: int, n: int, k: int, b_layout: str, acc: str) -> None:
        key = (m, n, k, b_layout, acc)
        with self._lock:
            if key in self._counts:
                self._counts[key] += 1
            elif len(self._counts) < self.capacity:
                self._counts[key] = 1
            else:
                self.overflow += 1
            if self.shared_dir is not None and not self._publish_pending:
                self._publish_pending = True
                timer = threading.Timer(PUBLISH_DELAY_S, self.publish)
                timer.daemon = True
                timer.start()

    def publish(self) -> None:
        """Write this worker's counts for the others to read (replaced atomically)."""
        with self._lock:
            self._publish_pending = False
            snapshot = {"counts": [[*key, count] for key, count in self._counts.items()], "overflow": self.overflow}
        write_atomic(self._own_file, json.dumps(snapshot))

    def _all_counts(self) -> tuple[dict, int]:
        """This worker's counts plus what the other workers published."""
        with self._lock:
            counts, overflow = dict(self._counts), self.overflow
        if self.shared_dir is not None:
            for path in self.shared_dir.glob("*.json"):
                if path == self._own_file:
                    continue
                try:
                    snapshot = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
                for *key, count in snapshot["counts"]:
                    counts[tuple(key)] = counts.get(tuple(key), 0) + count
                overflow += snapshot["overflow"]
        return counts, overflow

    def __len__(self) -> int:
        return len(self._all_counts()[0])

    def top(self, acc: str | None = None, b_layout: str | None = None, limit: int | None = None) -> list[dict]:
        """Most requested first (ties: smaller shapes first), optionally for one accumulator / layout."""
        return _ranked(self._all_counts()[0], acc, b_layout, limit)

    def report(self, acc: str | None = None, b_layout: str | None = None, limit: int | None = None) -> dict:
        """GET /v1/kernels/untuned: the ranking and the totals, from one read of the other workers' counts."""
        counts, overflow = self._all_counts()
        return {"shapes": _ranked(counts, acc, b_layout, limit), "tracked": len(counts), "capacity": self.capacity,
                "overflow_requests": overflow}

    def grid(self, acc: str, b_layout: str, limit: int | None = None) -> str:
        """The `M_N_K` lines of one accumulator and layout, most requested first: a `tuner.tune --grid` file."""
        return "".join(f"{s['m']}_{s['n']}_{s['k']}\n" for s in self.top(acc, b_layout, limit))


def _ranked(counts: dict, acc: str | None, b_layout: str | None, limit: int | None) -> list[dict]:
    items = [(key, count) for key, count in counts.items()
             if (acc is None or key[4] == acc) and (b_layout is None or key[3] == b_layout)]
    items.sort(key=lambda item: (-item[1], item[0][0] * item[0][1] * item[0][2], item[0]))
    return [{"m": m, "n": n, "k": k, "b_layout": layout, "acc": a, "requests": count}
            for (m, n, k, layout, a), count in items[:limit]]
