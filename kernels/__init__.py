"""The HGEMM kernel library: variants described as data (config, space), generated (codegen), built (build),
loaded and launched (runtime), chosen per shape (dispatch), with cuBLAS arms (cublas) as the baseline and fallback.

    import kernels
    c = kernels.gemm(a, b, b_layout="row", acc="f32")   # a: M×K fp16; b: K×N ("row") or N×K ("col"); c: M×N fp16
    d = kernels.get_dispatcher()                          # the process-wide Dispatcher of the current device
    import kernels.torch_op                               # torch.ops.hgemm.gemm: for torch.compile and autograd
    from kernels.linear import swap_linears              # a model's fp16 nn.Linear layers on the tuned GEMM

Importing it needs no GPU, no nvcc and nothing built: every GPU-side step is lazy (no CUDA call at import).
"""
from __future__ import annotations

import importlib
import threading

_dispatchers: dict = {}
_lock = threading.Lock()


def available() -> bool:
    """Whether a CUDA device is usable (the GPU backend); otherwise gemm runs on the CPU (`cpu_backend`)."""
    import torch

    return torch.cuda.is_available()


def _device_key(device) -> int:
    """-1 for the CPU, else the CUDA device index (None = the current CUDA device, or the CPU without CUDA)."""
    import torch

    if device is None:
        return torch.cuda.current_device() if torch.cuda.is_available() else -1
    device = torch.device(device)
    if device.type == "cpu":
        return -1
    if device.type != "cuda":
        raise ValueError(f"kernels run on CUDA devices or the CPU, not {device}")
    return torch.cuda.current_device() if device.index is None else device.index


def get_dispatcher(device=None):
    """The process-wide default Dispatcher for a device (created on first use, then shared)."""
    key = _device_key(device)
    dispatcher = _dispatchers.get(key)
    if dispatcher is None:
        with _lock:
            dispatcher = _dispatchers.get(key)
            if dispatcher is None:
                from kernels.dispatch import Dispatcher

                dispatcher = Dispatcher.default("cpu" if key < 0 else f"cuda:{key}")
                _dispatchers[key] = dispatcher
    return dispatcher


def gemm(a, b, *, b_layout: str = "row", acc: str = "f32", out=None):
    """C = A @ B with the tuned kernel for this shape (or cuBLAS), on torch's current stream. See Contract 1."""
    dispatcher = _dispatchers.get(a.get_device())  # get_device(): -1 on the CPU, the index on CUDA
    if dispatcher is None:
        dispatcher = get_dispatcher(a.device)
    return dispatcher.gemm(a, b, b_layout, acc, out)  # positional: the C fast path is one call away


_LAZY = {  # public names re-exported on first access, so `import kernels` stays light
    "Dispatcher": "kernels.dispatch", "Selection": "kernels.dispatch", "DispatchEvent": "kernels.dispatch",
    "FALLBACK_REASONS": "kernels.dispatch", "KernelConfig": "kernels.config", "CublasArm": "kernels.cublas",
    "CublasError": "kernels.cublas", "lt_algorithms": "kernels.cublas", "TunedTable": "kernels.tuned_tables",
    "TableError": "kernels.tuned_tables", "load_tables": "kernels.tuned_tables",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kernels' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["gemm", "get_dispatcher", "available", *_LAZY]
