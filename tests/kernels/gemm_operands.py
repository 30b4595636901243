"""Operands and the fp64 check the CPU dispatcher and fast-path tests share."""
import torch


def operands(m, n, k, b_layout="row", seed=0):
    """Fresh random-normal fp16 A (m×k) and B (k×n row-major, or n×k for col)."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).half()
    b = torch.randn(*((k, n) if b_layout == "row" else (n, k)), generator=g).half()
    return a, b


def rel_err(out, a, b, b_layout):
    """Relative Frobenius error of out against A @ B in float64."""
    ref = a.double() @ (b.double() if b_layout == "row" else b.double().t())
    return ((out.double() - ref).norm() / ref.norm()).item()
