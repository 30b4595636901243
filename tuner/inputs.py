"""The operands every competitor shares for one shape: enough rotated copies that together they exceed the L2 cache,
so a kernel timed back to back reads its inputs from HBM as it would in a real model, not from a warm cache."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

H200_L2_BYTES = 60 * 2**20  # fallback when the device does not report its L2 size


ALIGN_ELEMENTS = 128  # fp16 elements in 256 bytes: where each copy starts


def copies_needed(m: int, n: int, k: int, l2_bytes: int, factor: float = 2.0, max_copies: int = 4096) -> int:
    """Copies of (A, B, C) so that their total is at least `factor` times the L2 size."""
    set_bytes = 2 * (m * k + k * n + m * n)  # fp16
    return max(1, min(max_copies, math.ceil(factor * l2_bytes / set_bytes)))


@dataclass
class OperandSet:
    """Copy i: a[i] (M×K), b_row[i] (K×N), b_col[i] (N×K, same values as b_row[i]), out[i] (M×N)."""
    m: int
    n: int
    k: int
    a: list = field(default_factory=list)
    b_row: list = field(default_factory=list)
    b_col: list = field(default_factory=list)
    out: list = field(default_factory=list)

    @property
    def copies(self) -> int:
        return len(self.a)

    def b(self, i: int, b_layout: str):
        return self.b_row[i] if b_layout == "row" else self.b_col[i]


def make_operands(m: int, n: int, k: int, copies: int, device="cuda", seed: int = 0) -> OperandSet:
    """Random-normal fp16 operands (never zeros: a kernel that writes nothing must not look right). All copies of an
    operand come from one allocation and one random draw (thousands of small shapes' copies would otherwise cost
    thousands of launches), each copy starting on a 256-byte boundary like a fresh allocation, so alignment-sensitive
    paths (TMA, cuBLASLt algorithm lists) see what a caller's tensors give them."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)

    def stacked(rows: int, cols: int, fill: bool):
        stride = -(-rows * cols // ALIGN_ELEMENTS) * ALIGN_ELEMENTS
        flat = torch.empty(copies, stride, device=device, dtype=torch.float16)
        if fill:
            flat.normal_(generator=gen)
        return flat[:, : rows * cols].view(copies, rows, cols)

    a, b_row, b_col, out = stacked(m, k, True), stacked(k, n, True), stacked(n, k, False), stacked(m, n, False)
    b_col.copy_(b_row.transpose(1, 2))
    ops = OperandSet(m, n, k)
    ops.a, ops.b_row, ops.b_col, ops.out = (list(t.unbind(0)) for t in (a, b_row, b_col, out))
    return ops


def device_l2_bytes(device) -> int:
    import torch

    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    return int(size) or H200_L2_BYTES
