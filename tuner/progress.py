"""A dependency-free progress bar on stderr (one line, redrawn; plain lines when stderr is not a terminal)."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, items, label: str = "", total: int | None = None, stream=None, every_s: float = 0.5):
        self.items, self.label = items, label
        self.total = total if total is not None else (len(items) if hasattr(items, "__len__") else None)
        self.stream = stream or sys.stderr
        self.every_s, self.done, self.start, self._last = every_s, 0, time.monotonic(), 0.0

    def __iter__(self):
        for item in self.items:
            yield item
            self.update()
        self.close()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._last >= self.every_s or self.done == self.total:
            self._last = now
            self._draw(now)

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self.start
        if not self.total:
            return f"{self.label} {self.done} done, {elapsed:.0f}s"
        frac = self.done / self.total
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        return f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:.0f}s eta {eta:.0f}s"

    def _draw(self, now: float) -> None:
        tty = getattr(self.stream, "isatty", lambda: False)()
        self.stream.write(("\r" if tty else "") + self.line(now) + ("" if tty else "\n"))
        self.stream.flush()

    def close(self) -> None:
        if getattr(self.stream, "isatty", lambda: False)():
            self.stream.write("\n")
            self.stream.flush()
