"""The shapes worth tuning next: GEMMs the service ran on cuBLAS because the tuned tables do not hold their shape
(fallback `no_tuned_kernel`), counted by request. `GET /v1/kernels/untuned` lists them; `?format=grid` gives the
`M_N_K` lines `python -m tuner.tune --grid` reads, and the tables it writes are served with `HGEMM_EXTRA_TABLES`
(docs/dispatch.md, "Tuning the shapes you serve"). A fused GEMM is counted under its own (stacked) M."""
from __future__ import annotations

import threading

UNTUNED_REASON = "no_tuned_kernel"


class UntunedShapes:
    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self.overflow = 0  # requests of shapes first seen while `capacity` shapes were already tracked
        self._counts: dict[tuple[int, int, int, str, str], int] = {}
        self._lock = threading.Lock()  # the batch thread adds, the event loop reads

    def add(self, m: int, n: int, k: int, b_layout: str, acc: str) -> None:
        key = (m, n, k, b_layout, acc)
        with self._lock:
            if key in self._counts:
                self._counts[key] += 1
            elif len(self._counts) < self.capacity:
                self._counts[key] = 1
            else:
                self.overflow += 1

    def __len__(self) -> int:
        return len(self._counts)

    def top(self, acc: str | None = None, b_layout: str | None = None, limit: int | None = None) -> list[dict]:
        """Most requested first (ties: smaller shapes first), optionally for one accumulator / layout."""
        with self._lock:
            items = list(self._counts.items())
        items = [(key, count) for key, count in items
                 if (acc is None or key[4] == acc) and (b_layout is None or key[3] == b_layout)]
        items.sort(key=lambda item: (-item[1], item[0][0] * item[0][1] * item[0][2], item[0]))
        return [{"m": m, "n": n, "k": k, "b_layout": layout, "acc": a, "requests": count}
                for (m, n, k, layout, a), count in items[:limit]]

    def grid(self, acc: str, b_layout: str, limit: int | None = None) -> str:
        """The `M_N_K` lines of one accumulator and layout, most requested first: a `tuner.tune --grid` file."""
        return "".join(f"{s['m']}_{s['n']}_{s['k']}\n" for s in self.top(acc, b_layout, limit))
