"""The operands every competitor shares for one shape: enough rotated copies that together they exceed the L2 cache,
so a kernel timed back to back reads its inputs from HBM as it would in a real model, not from a warm cache."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

H200_L2_BYTES = 60 * 2**20  # fallback when the device does not report its L2 size


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
    """Random-normal fp16 operands (never zeros: a kernel that writes nothing must not look right)."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)
    ops = OperandSet(m, n, k)
    for _ in range(copies):
        a = torch.randn(m, k, generator=gen, device=device, dtype=torch.float16)
        b = torch.randn(k, n, generator=gen, device=device, dtype=torch.float16)
        ops.a.append(a)
        ops.b_row.append(b)
        ops.b_col.append(b.t().contiguous())
        ops.out.append(torch.empty(m, n, device=device, dtype=torch.float16))
    return ops


def device_l2_bytes(device) -> int:
    import torch

    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    return int(size) or H200_L2_BYTES
