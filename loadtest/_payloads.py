"""Request bodies for the load scenarios, built once per process (the generator must not spend its CPU on numpy).
Wire formats: service/codec.py and service/schemas.py (fp16 little-endian, row-major)."""
from __future__ import annotations

import random
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np

FP16 = np.dtype("<f2")


def random_fp16(rows: int, cols: int, seed: int) -> np.ndarray:
    # values in [-1, 1): sums of K products stay far from fp16 overflow for any K the scenarios use
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(rows, cols)).astype(FP16)


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def c_bytes(self) -> int:
        return self.m * self.n * FP16.itemsize


def parse_shape(text: str) -> Shape:
    """'64x4096x64' -> Shape(m=64, n=4096, k=64)."""
    try:
        m, n, k = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"shape {text!r} is not MxNxK (e.g. 64x4096x64)") from None
    if min(m, n, k) < 1:
        raise ValueError(f"shape {text!r} has a dimension < 1")
    return Shape(m, n, k)


def small_json_body(size: int = 8, seed: int = 0) -> dict:
    """A size×size×size GEMM as nested lists (the JSON path, not the fast path)."""
    a = random_fp16(size, size, seed).astype(float).tolist()
    b = random_fp16(size, size, seed + 1).astype(float).tolist()
    return {"a": {"data": a}, "b": {"data": b}, "b_layout": "row", "acc": "f32"}


def binary_body(shape: Shape, b_layout: str = "col", seed: int = 0) -> bytes:
    """A's bytes then B's bytes (B is N×K for col, K×N for row)."""
    b_rows, b_cols = (shape.n, shape.k) if b_layout == "col" else (shape.k, shape.n)
    return random_fp16(shape.m, shape.k, seed).tobytes() + random_fp16(b_rows, b_cols, seed + 1).tobytes()


def binary_query(shape: Shape, b_layout: str = "col", acc: str = "f32", operand: str | None = None) -> str:
    if operand is not None:
        return f"/v1/hgemm?m={shape.m}&operand={operand}&acc={acc}"
    return f"/v1/hgemm?m={shape.m}&n={shape.n}&k={shape.k}&b_layout={b_layout}&acc={acc}"


def operand_request(n: int, k: int, name: str, seed: int = 0) -> tuple[str, bytes]:
    """A resident B in the x @ Wᵀ layout (N×K, b_layout=col) for POST /v1/operands, binary: (path, body)."""
    return (f"/v1/operands?k={k}&n={n}&b_layout=col&name={quote(name)}", random_fp16(n, k, seed).tobytes())


# A 1B-class decoder layer (hidden 2048, MLP 5632): its four weight matrices as resident N×K operands (~80 MB in
# all, well inside the default 2 GiB budget; the largest is 23 MB, below the default 128 MiB body limit).
LLM_WEIGHTS = {"attn_qkv": (6144, 2048), "attn_out": (2048, 2048), "mlp_up": (5632, 2048), "mlp_down": (2048, 5632)}
# Tokens per request (M) and how often: mostly batched decode, sometimes a prefill chunk.
LLM_TOKENS = ((1, 0.30), (8, 0.30), (32, 0.25), (128, 0.10), (512, 0.05))


class MixedShapes:
    """Draws (weight name, M) pairs for the mixed LLM-like scenario and keeps one A per (M, K) so that requests cost
    the generator nothing but a dictionary lookup."""

    def __init__(self, seed: int = 0):
        self.random = random.Random(seed)
        self.tokens = [m for m, _ in LLM_TOKENS]
        self.weights = [w for _, w in LLM_TOKENS]
        self._a: dict[tuple[int, int], bytes] = {}

    def draw(self) -> tuple[str, int]:
        return self.random.choice(sorted(LLM_WEIGHTS)), self.random.choices(self.tokens, self.weights)[0]

    def a_bytes(self, m: int, k: int) -> bytes:
        if (m, k) not in self._a:
            self._a[(m, k)] = random_fp16(m, k, seed=m * 100_003 + k).tobytes()
        return self._a[(m, k)]
