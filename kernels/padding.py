"""Run a variant on zero-padded copies of the operands, for shapes whose alignment (or table coverage) it lacks.

C[:m, :n] of the padded product equals the real product: the padded K columns of A and K rows of B are zero, so they
add nothing, and the padded rows/columns of C are sliced away. Buffers are zeroed once, then only the [:m, :k] /
[:k, :n] / [:n, :k] region is ever written, so the zeros stay. They are cached per (thread, device, stream, shape):
concurrent calls never share them, and stream order keeps reuse safe.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import torch

PAD_QUANTA = (8, 16, 32, 64, 128)


def _up(x: int, q: int) -> int:
    return -(-x // q) * q


def pad_targets(m: int, n: int, k: int, max_ratio: float = 1.25) -> list[tuple[int, int, int]]:
    """Padded shapes to try, smallest first: N and K (the contiguous extents) rounded up to 8..128, with or without
    M; only those costing at most max_ratio times the original FLOPs."""
    volume = m * n * k
    out = set()
    for q in PAD_QUANTA:
        for target in ((m, _up(n, q), _up(k, q)), (_up(m, q), _up(n, q), _up(k, q))):
            if target != (m, n, k) and target[0] * target[1] * target[2] <= max_ratio * volume:
                out.add(target)
    return sorted(out, key=lambda t: (t[0] * t[1] * t[2], t))


class PadBufferPool:
    """Zeroed (A, B, C) buffers, least recently used evicted beyond a byte budget -- except buffers used while a CUDA
    graph was being captured, which a graph may replay later and so are kept for the life of the process."""

    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._buffers: OrderedDict[tuple, tuple] = OrderedDict()
        self._pinned: set[tuple] = set()
        self._bytes = 0
        self._lock = threading.Lock()
        self._stream = None

    def _stream_id(self, tensor) -> int:
        if not tensor.is_cuda:
            return 0
        if self._stream is None:
            from kernels.runtime import _stream_getter

            self._stream = _stream_getter()
        return self._stream(tensor.get_device())

    def get(self, like, key: tuple, shapes: tuple[tuple[int, int], ...]):
        full_key = (threading.get_ident(), like.get_device(), self._stream_id(like), *key)
        with self._lock:
            buffers = self._buffers.get(full_key)
            if buffers is not None:
                self._buffers.move_to_end(full_key)
            else:
                buffers = tuple(torch.zeros(s, dtype=like.dtype, device=like.device) for s in shapes)
                self._buffers[full_key] = buffers
                self._bytes += sum(t.numel() * t.element_size() for t in buffers)
                self._evict()
            if like.is_cuda and torch.cuda.is_current_stream_capturing():
                self._pinned.add(full_key)
        return buffers

    def _evict(self) -> None:
        for key in list(self._buffers):
            if self._bytes <= self.budget_bytes or len(self._buffers) <= 1:
                return
            if key in self._pinned:
                continue
            evicted = self._buffers.pop(key)
            self._bytes -= sum(t.numel() * t.element_size() for t in evicted)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._buffers)


class PaddedLauncher:
    """run(a, b, out) for the original shape, computed by `inner` on the padded target shape."""

    def __init__(self, inner, shape: tuple[int, int, int], target: tuple[int, int, int], b_layout: str,
                 pool: PadBufferPool):
        (m, n, k), (pm, pn, pk) = shape, target
        if pm < m or pn < n or pk < k:
            raise ValueError(f"padded shape {target} is smaller than {shape}")
        self.inner, self.shape, self.target, self.b_layout, self.pool = inner, shape, target, b_layout, pool
        self._shapes = ((pm, pk), (pk, pn) if b_layout == "row" else (pn, pk), (pm, pn))
        self._key = (shape, target, b_layout)
        self._dtype = torch.float16

    def __call__(self, a, b, out):
        m, n, k = self.shape
        if not (a.dtype == b.dtype == out.dtype == self._dtype):  # copy_ would convert silently
            raise TypeError(f"a, b and out must be float16, got {a.dtype}, {b.dtype}, {out.dtype}")
        a_pad, b_pad, c_pad = self.pool.get(a, self._key, self._shapes)
        a_pad[:m, :k].copy_(a)
        if self.b_layout == "row":
            b_pad[:k, :n].copy_(b)
        else:
            b_pad[:n, :k].copy_(b)
        self.inner(a_pad, b_pad, c_pad)
        out.copy_(c_pad[:m, :n])
        return out
