"""GEMM shapes: the `M_N_K` spelling of CUDA-L2's grid, FLOP counts and the size buckets of the summary."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

# Size buckets by FLOP (2*M*N*K): the three ranges, lower bound inclusive.
BUCKETS = (("<1e9", 0.0, 1e9), ("1e9-1e11", 1e9, 1e11), (">1e11", 1e11, float("inf")))


class Shape(NamedTuple):
    m: int
    n: int
    k: int

    @property
    def mnk(self) -> str:
        return f"{self.m}_{self.n}_{self.k}"

    @property
    def flop(self) -> float:
        return 2.0 * self.m * self.n * self.k


def parse_mnk(text: str) -> Shape:
    """'64_4096_64' -> Shape(64, 4096, 64); every dimension must be a positive integer."""
    parts = text.strip().split("_")
    if len(parts) != 3:
        raise ValueError(f"expected M_N_K, got {text!r}")
    try:
        m, n, k = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"expected integers in M_N_K, got {text!r}") from None
    if min(m, n, k) < 1:
        raise ValueError(f"dimensions must be >= 1, got {text!r}")
    return Shape(m, n, k)


def read_grid(path: str | Path) -> list[Shape]:
    """A grid file: one M_N_K per line; blank lines and '#' comments ignored; duplicates kept once, in order."""
    seen: dict[Shape, None] = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            seen.setdefault(parse_mnk(line), None)
    return list(seen)


def bucket_of(flop: float) -> str:
    for name, lo, hi in BUCKETS:
        if lo <= flop < hi:
            return name
    raise ValueError(f"FLOP must be >= 0, got {flop}")


def tflops(shape: Shape, us: float) -> float:
    return shape.flop / (us * 1e-6) / 1e12
