"""GEMM shapes: the `M_N_K` spelling of CUDA-L2's grid, FLOP counts and the size buckets of the summary."""
from __future__ import annotations

import math
import random
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


GRID_VALUES = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384)  # CUDA-L2's M, N, K
LLM_NK = ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (4096, 14336), (5120, 5120), (13824, 5120),
          (5120, 13824), (6144, 4096), (12288, 4096))  # (N, K) of projection layers of 7B–13B-class models


def off_grid_sample(count: int, seed: int, llm_fraction: float = 0.25) -> list[Shape]:
    """Shapes the tuned tables do not hold, for the dispatcher's rules for untuned shapes (step 4 / predictor):
    M, N, K log-uniform in [64, 16384] — N and K multiples of 8 three times in four (what kernels take unpadded), any
    integer otherwise, M any integer — and a `llm_fraction` of (M any, N×K of a transformer projection). No shape
    of CUDA-L2's grid is drawn."""
    rng = random.Random(seed)

    def log_uniform(multiple: int) -> int:
        value = math.exp(rng.uniform(math.log(64), math.log(16384)))
        return max(multiple, round(value / multiple) * multiple)

    shapes: dict[Shape, None] = {}
    while len(shapes) < count:
        if rng.random() < llm_fraction:
            shape = Shape(log_uniform(1), *rng.choice(LLM_NK))
        else:
            step = 8 if rng.random() < 0.75 else 1
            shape = Shape(log_uniform(1), log_uniform(step), log_uniform(step))
        if not all(v in GRID_VALUES for v in shape):
            shapes.setdefault(shape, None)
    return sorted(shapes, key=lambda s: s.flop)


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description="Print a sample of off-grid shapes (M_N_K lines).")
    p.add_argument("--off-grid", type=int, required=True, metavar="COUNT")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"# python -m tuner.shapes --off-grid {args.off_grid} --seed {args.seed}")
    for shape in off_grid_sample(args.off_grid, args.seed):
        print(shape.mnk)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
