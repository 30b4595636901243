"""`kernels.linear.Linear`: nn.Linear whose matmul is the tuned HGEMM, and `swap_linears` to put it into a model.

    from kernels.linear import Linear, swap_linears
    layer = Linear(4096, 11008, bias=False, device="cuda")        # fp16 weights, fp32 accumulation by default
    swapped = swap_linears(model)                                  # every fp16 nn.Linear of a model, in place

A linear layer computes y = x·Wᵀ with W stored N×K (out × in features): the `col` layout, which the col tables are
tuned for, so the weight is used as it is stored, with no copy. The matmul goes through `kernels.torch_op.gemm`: the
direct `kernels.gemm` call in plain eager inference, the `hgemm.gemm` operator under autograd and torch.compile.
The bias is added after the GEMM, in place on its fresh output (no fused epilogue).
Inputs with no rows or no features (M = 0 or K = 0, which the kernels reject) take `F.linear`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels import torch_op


def _check(dtype: torch.dtype, acc: str) -> None:
    if dtype != torch.float16:
        raise TypeError(f"hgemm Linear holds float16 weights, not {dtype}")
    if acc not in torch_op.ACCS:
        raise ValueError(f"acc must be one of {torch_op.ACCS}, not {acc!r}")


class Linear(torch.nn.Linear):
    """nn.Linear (same parameters, state_dict and init) in fp16, its matmul the tuned HGEMM with `acc` accumulation."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=torch.float16, acc: str = "f32"):
        _check(dtype, acc)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.acc = acc

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, acc: str = "f32") -> "Linear":
        """A Linear that shares `linear`'s parameters (no copy: training either trains both)."""
        _check(linear.weight.dtype, acc)
        new = cls.__new__(cls)
        torch.nn.Module.__init__(new)
        new.in_features, new.out_features, new.acc = linear.in_features, linear.out_features, acc
        new.register_parameter("weight", linear.weight)
        new.register_parameter("bias", linear.bias)      # None stays a registered None, as nn.Linear(bias=False) has it
        new.training = linear.training
        return new

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 0:
            raise ValueError("Linear input must have at least 1 dimension")
        if x.numel() == 0 or self.in_features == 0:
            return F.linear(x, self.weight, self.bias)
        vector = x.dim() == 1
        y = torch_op.gemm(x.unsqueeze(0) if vector else x, self.weight, b_layout="col", acc=self.acc)
        if self.bias is not None:
            y = y.add_(self.bias)    # in place on the fresh output: autograd records it (the GEMM saved A, W only)
        return y.squeeze(0) if vector else y

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, acc={self.acc}"


def swap_linears(model: torch.nn.Module, acc: str = "f32", where=None) -> int:
    """Replace, in place, every nn.Linear in `model` that holds float16 weights (and for which `where(name, module)`
    is true, if given) with a `Linear` sharing its parameters. Returns how many were replaced; layers in other dtypes
    are left as they are. `model` itself is not replaced when it is a bare nn.Linear: use `Linear.from_linear`."""
    swapped = 0
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if type(child) is not torch.nn.Linear or child.weight.dtype != torch.float16:
                continue
            name = f"{parent_name}.{child_name}" if parent_name else child_name
            if where is not None and not where(name, child):
                continue
            setattr(parent, child_name, Linear.from_linear(child, acc=acc))
            swapped += 1
    return swapped


__all__ = ["Linear", "swap_linears"]
