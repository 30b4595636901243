"""`torch.ops.hgemm.gemm`: the kernel library as a PyTorch custom operator, for torch.compile and autograd.

    import kernels.torch_op                                   # registers the operator (once per process)
    c = torch.ops.hgemm.gemm(a, b, "row", "f32")              # the same semantics as kernels.gemm (Contract 1)
    c = kernels.torch_op.gemm(x, w, b_layout="col")           # x @ wᵀ, keywords as kernels.gemm takes them;
                                                              # x may be …×K (batch dims folded into M)

`kernels.gemm` stays the fast path: on a shape it has seen, one C call picks and launches the kernel. The operator
goes through PyTorch's dispatcher and torch.library's Python layer first (19.4 against kernels.gemm's 6.1 µs host
time per call on an H100 host, session 42; none under CUDA-graph replay), and `gemm` below takes it only where it is
needed. What it gives a model:
- torch.compile traces through it: the fake implementation gives C's shape and dtype without running anything, and
  the compiled graph calls the operator as one opaque node, so the tuned choice runs (inductor neither fuses into it
  nor replaces it with its own mm);
- autograd differentiates it with the same library: for `row` (B is K×N) dA = dC·Bᵀ is `gemm(dC, B, "col")` on B as
  given and dB = Aᵀ·dC needs Aᵀ made contiguous (one copy); for `col` (B is W, N×K) dA = dC·W is `gemm(dC, W, "row")`
  and dW = dCᵀ·A needs dCᵀ made contiguous. The gradients accumulate as the forward did (`acc`).
Operands that are not contiguous are made so (kernels.gemm requires it); kernels.gemm checks everything else, and
the fake implementation, which runs nothing, raises the same kinds of error for wrong ranks, dtypes and sizes.
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

import kernels

B_LAYOUTS = ("row", "col")
ACCS = ("f32", "f16")


def _check(a: torch.Tensor, b: torch.Tensor, b_layout: str, acc: str) -> tuple[int, int]:
    """(M, N) of C, for the fake implementation; TypeError / ValueError as kernels.gemm raises them."""
    if b_layout not in B_LAYOUTS:
        raise ValueError(f"b_layout must be one of {B_LAYOUTS}, not {b_layout!r}")
    if acc not in ACCS:
        raise ValueError(f"acc must be one of {ACCS}, not {acc!r}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D, got {a.dim()}-D and {b.dim()}-D")
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise TypeError(f"a and b must be float16, got {a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"a and b must be on the same device, got {a.device} and {b.device}")
    m, k = a.shape
    n, kb = (b.shape[1], b.shape[0]) if b_layout == "row" else tuple(b.shape)
    if kb != k:
        raise ValueError(f"K mismatch: a is {m}×{k}, b ({b_layout}) is {tuple(b.shape)}")
    return m, n


@torch.library.custom_op("hgemm::gemm", mutates_args=())
def _gemm(a: torch.Tensor, b: torch.Tensor, b_layout: str, acc: str) -> torch.Tensor:
    return kernels.gemm(a.contiguous(), b.contiguous(), b_layout=b_layout, acc=acc)


@_gemm.register_fake
def _gemm_fake(a, b, b_layout, acc):
    m, n = _check(a, b, b_layout, acc)
    return a.new_empty((m, n))


def _setup_context(ctx, inputs, output) -> None:
    a, b, b_layout, acc = inputs
    ctx.b_layout, ctx.acc = b_layout, acc
    ctx.save_for_backward(a, b)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad = grad.contiguous()
    op, acc = torch.ops.hgemm.gemm, ctx.acc
    da = db = None
    if ctx.b_layout == "row":                                       # C = A·B, B: K×N
        if ctx.needs_input_grad[0]:
            da = op(grad, b, "col", acc)                            # dC·Bᵀ: B read as N'×K' = K×N
        if ctx.needs_input_grad[1]:
            db = op(a.t().contiguous(), grad, "row", acc)           # Aᵀ·dC
    else:                                                           # C = A·Wᵀ, W: N×K
        if ctx.needs_input_grad[0]:
            da = op(grad, b, "row", acc)                            # dC·W
        if ctx.needs_input_grad[1]:
            db = op(grad.t().contiguous(), a, "row", acc)           # dCᵀ·A
    return da, db, None, None


_gemm.register_autograd(_backward, setup_context=_setup_context)


def gemm(a: torch.Tensor, b: torch.Tensor, *, b_layout: str = "row", acc: str = "f32") -> torch.Tensor:
    """C = A @ B through `torch.ops.hgemm.gemm` (differentiable, traceable by torch.compile); in plain eager code with
    nothing to differentiate, `kernels.gemm` directly (the same call the operator makes, without its layer).
    `a` may have leading batch dimensions (…×K, as F.linear takes x): they are one GEMM of M = their product."""
    lead = a.shape[:-1] if isinstance(a, torch.Tensor) and a.dim() > 2 else None
    if lead is not None:
        a = a.reshape(-1, a.shape[-1])
    if _plain_eager(a, b):
        c = kernels.gemm(a.contiguous(), b.contiguous(), b_layout=b_layout, acc=acc)
    else:
        c = torch.ops.hgemm.gemm(a, b, b_layout, acc)
    return c if lead is None else c.reshape(*lead, c.shape[-1])


# tensor types with nothing of their own to dispatch (a model's weights are nn.Parameter, which disables
# __torch_function__ and behaves as a plain tensor)
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _plain_eager(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the operator's layer would add nothing but time (~13 µs per call on an H100 host, session 42): no
    gradient to record, no tracer (torch.compile, export, make_fx), no fake, functional or other tensor subclass, no
    dispatch or torch-function mode, no functorch transform (vmap's batched tensors look like plain ones). Anything
    else goes through the operator, which each of them understands or rejects."""
    return (type(a) in _PLAIN and type(b) in _PLAIN
            and not (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad))
            and not torch.compiler.is_compiling()
            and _get_current_dispatch_mode() is None
            and not torch._C._is_torch_function_mode_enabled()
            and not torch._C._are_functorch_transforms_active())


__all__ = ["gemm", "B_LAYOUTS", "ACCS"]
