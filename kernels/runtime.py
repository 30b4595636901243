"""Load built variants (ctypes, C ABI of kernels/codegen/hgemm_abi.h) and launch them on torch's current stream.

    k = runtime.load(cfg)          # builds on demand when nvcc is there, else needs a cached/unpacked .so
    k(a, b, out)                   # C = A @ B (b: K×N for b_layout=row, N×K for col), on the current stream

The call path is kept lean (target ≤ 6 µs host time per cached dispatch): a launcher closure per knob set, one ctypes
struct per thread filled with one struct.pack_into and passed by address (argtypes set once), the stream handle read
as an int, and a workspace cached per (device, stream) that only grows. The C side caches the prepared CUTLASS params
per (shape, strides, knobs, workspace, device) and retargets them when only the operand pointers moved (TMA
descriptor addresses patched, not re-encoded), so a repeated call goes straight to the launch.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from pathlib import Path

from kernels.config import KernelConfig

HGEMM_OK = 0
HGEMM_ERR_INVALID_ARGS = 1
HGEMM_ERR_WORKSPACE_TOO_SMALL = 2
HGEMM_ERR_UNSUPPORTED = 3
HGEMM_ERR_CUTLASS_BASE = 100
HGEMM_ERR_CUDA_BASE = 10000
TMA_ALIGN_BYTES = 16  # operand pointers of the sm90 (TMA) and sm80 (cp.async 128-bit) variants


class hgemm_args_t(ctypes.Structure):
    _fields_ = [
        ("A", ctypes.c_void_p), ("B", ctypes.c_void_p), ("C", ctypes.c_void_p),
        ("M", ctypes.c_int64), ("N", ctypes.c_int64), ("K", ctypes.c_int64),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64),
        ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
        ("raster", ctypes.c_int32), ("swizzle", ctypes.c_int32), ("splits", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
    ]


# The struct's bytes in one struct.pack_into call (15 ctypes attribute writes cost ~1 µs more per call).
_ARGS_LAYOUT = struct.Struct("=3Q6q2Q3i4xQ")
assert _ARGS_LAYOUT.size == ctypes.sizeof(hgemm_args_t)
for _field, _offset in (("workspace", 72), ("raster", 88), ("stream", 104)):
    assert getattr(hgemm_args_t, _field).offset == _offset


_pack = _ARGS_LAYOUT.pack_into


class KernelError(RuntimeError):
    pass


class KernelNotBuilt(KernelError):
    """No .so for this variant and it cannot be compiled here (no nvcc / no CUTLASS headers)."""


class KernelLaunchError(KernelError):
    def __init__(self, name: str, status: int, detail: str = ""):
        self.name, self.status = name, status
        super().__init__(f"{name}: hgemm_run returned {status} ({describe_status(status)}){detail}")


_CUTLASS_STATUS = ["kSuccess", "kErrorMisalignedOperand", "kErrorInvalidDataType", "kErrorInvalidLayout",
                   "kErrorInvalidProblem", "kErrorNotSupported", "kErrorWorkspaceNull", "kErrorInternal",
                   "kErrorArchMismatch", "kErrorInsufficientDriver", "kErrorMemoryAllocation", "kInvalid"]


def describe_status(status: int) -> str:
    if status == HGEMM_OK:
        return "ok"
    if status == HGEMM_ERR_INVALID_ARGS:
        return "invalid arguments"
    if status == HGEMM_ERR_WORKSPACE_TOO_SMALL:
        return "workspace too small"
    if status == HGEMM_ERR_UNSUPPORTED:
        return "problem or knob not supported by this variant"
    if HGEMM_ERR_CUTLASS_BASE <= status < HGEMM_ERR_CUDA_BASE:
        code = status - HGEMM_ERR_CUTLASS_BASE
        return "cutlass::Status::" + (_CUTLASS_STATUS[code] if code < len(_CUTLASS_STATUS) else str(code))
    if status >= HGEMM_ERR_CUDA_BASE:
        return f"cudaError {status - HGEMM_ERR_CUDA_BASE}"
    return "unknown"


# --- workspace: one growing buffer per (device, stream), so concurrent streams never share scratch memory ----------
_workspaces: dict[tuple[int, int], object] = {}
# Outgrown workspaces, never freed: a CUDA graph holds the raw pointer its launches were captured with, so a freed one
# would go back to the caching allocator, whose next tensor on that stream every replay would then write stream-K
# partials and cuBLAS scratch into. Growth doubles, so what is kept here is at most the size of the current buffers
# (the split-K variants' own scratch is kept the same way: codegen/zeroed_workspace.cuh).
_outgrown: list = []
_workspace_lock = threading.Lock()


def _workspace(device: int, stream: int, nbytes: int):
    """A uint8 CUDA tensor of at least nbytes, reused across calls on this stream; grown (x2) when too small."""
    import torch

    key = (device, stream)
    buf = _workspaces.get(key)
    if buf is None or buf.numel() < nbytes:
        with _workspace_lock:
            buf = _workspaces.get(key)
            if buf is None or buf.numel() < nbytes:
                size = max(nbytes, 2 * (buf.numel() if buf is not None else 0), 1 << 20)
                if buf is not None:
                    _outgrown.append(buf)
                buf = torch.empty(size, dtype=torch.uint8, device=f"cuda:{device}")
                _workspaces[key] = buf
    return buf


class hgemm_cache_stats_t(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("hits", "retargeted", "prepared", "retarget_checked", "retarget_refused")]


class _ThreadState(threading.local):
    """Per thread: the argument struct (C reads it after ctypes released the GIL, so threads must not share one), its
    address, and the workspace bound last: (device, stream, pointer, bytes, tensor kept alive)."""

    def __init__(self):
        self.args = hgemm_args_t()
        self.addr = ctypes.addressof(self.args)
        self.ws = (-1, -1, 0, 0, None)


def _stream_getter():
    """int handle of torch's current stream for a device index; the private fast path when torch has it."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


class CompiledKernel:
    """One loaded variant. Call it with fp16 CUDA tensors: k(a, b, out, raster=0, swizzle=0, splits=0)."""

    def __init__(self, cfg: KernelConfig, path: Path):
        self.cfg, self.path, self.name = cfg, Path(path), cfg.name
        self._lib = ctypes.CDLL(str(path))
        ptr = ctypes.c_void_p  # the address of this thread's hgemm_args_t: an int converts faster than byref()
        self._run = self._lib.hgemm_run
        self._run.argtypes, self._run.restype = [ptr], ctypes.c_int
        self._ws_bytes = self._lib.hgemm_workspace_bytes
        self._ws_bytes.argtypes, self._ws_bytes.restype = [ptr], ctypes.c_size_t
        self._can = self._lib.hgemm_can_implement
        self._can.argtypes, self._can.restype = [ptr], ctypes.c_int
        name_fn = self._lib.hgemm_variant_name
        name_fn.argtypes, name_fn.restype = [], ctypes.c_char_p
        built_name = name_fn().decode()
        if built_name != cfg.name:
            raise KernelError(f"{path} exports variant {built_name!r}, expected {cfg.name!r}")
        self._b_col = cfg.b_layout == "col"
        self._local = _ThreadState()
        self._stream = _stream_getter()
        self._launchers: dict[tuple[int, int, int], object] = {}
        import torch

        self._f16 = torch.float16

    def _args(self) -> hgemm_args_t:
        """This thread's argument struct (reused by every call on the thread; its address is self._local.addr)."""
        return self._local.args

    def fill(self, a, b, out, raster=0, swizzle=0, splits=0) -> hgemm_args_t:
        """Fill (and return) this thread's argument struct from the tensors; no workspace, no stream yet."""
        m, k = a.shape
        n = b.shape[0] if self._b_col else b.shape[1]
        if (b.shape[1] if self._b_col else b.shape[0]) != k or out.shape[0] != m or out.shape[1] != n:
            raise ValueError(f"{self.name}: shapes a{tuple(a.shape)} b{tuple(b.shape)} out{tuple(out.shape)} "
                             f"do not match C = A @ B with b_layout={self.cfg.b_layout}")
        if a.stride(1) != 1 or b.stride(1) != 1 or out.stride(1) != 1:
            raise ValueError(f"{self.name}: a, b and out need unit stride along their last dimension")
        s = self._args()
        s.A, s.B, s.C = a.data_ptr(), b.data_ptr(), out.data_ptr()
        s.M, s.N, s.K = m, n, k
        s.lda, s.ldb, s.ldc = a.stride(0), b.stride(0), out.stride(0)
        s.raster, s.swizzle, s.splits = raster, swizzle, splits
        return s

    def __call__(self, a, b, out, *, raster: int = 0, swizzle: int = 0, splits: int = 0, workspace=None):
        """Launch C = A @ B on torch's current stream (with the per-(device, stream) workspace unless one is given)."""
        if workspace is None:
            run = self._launchers.get((raster, swizzle, splits)) or self.launcher(raster, swizzle, splits)
            return run(a, b, out)
        self._check(a, b, out)
        device = a.get_device()
        s = self.fill(a, b, out, raster, swizzle, splits)
        s.workspace, s.workspace_bytes = workspace.data_ptr(), workspace.numel() * workspace.element_size()
        s.stream = self._stream(device)
        status = self._run(self._local.addr)
        if status != HGEMM_OK:
            raise KernelLaunchError(self.name, status, f" for M={s.M} N={s.N} K={s.K}")
        return out

    def _check(self, a, b, out) -> None:
        f16 = self._f16
        if a.dtype is not f16 or b.dtype is not f16 or out.dtype is not f16:
            raise TypeError(f"{self.name}: a, b and out must be float16")
        device = a.get_device()
        if device < 0 or b.get_device() != device or out.get_device() != device:
            raise ValueError(f"{self.name}: a, b and out must be on the same CUDA device")

    def launcher(self, raster: int = 0, swizzle: int = 0, splits: int = 0):
        """run(a, b, out) -> out with these knobs bound: the hot path (what the dispatcher caches per shape). Operands
        are checked on every call (dtype, device, shapes, unit inner stride: a wrong one would compute garbage, not
        fail); the C side caches the prepared CUTLASS params, so a repeated call is a check, a pack and a launch."""
        key = (int(raster), int(swizzle), int(splits))
        run = self._launchers.get(key)
        if run is None:
            run = self._launchers[key] = self._make_launcher(*key)
        return run

    def _make_launcher(self, raster: int, swizzle: int, splits: int):
        name, b_col, f16, local = self.name, self._b_col, self._f16, self._local
        stream_of, c_run, bind_workspace = self._stream, self._run, self._bind_workspace

        def run(a, b, out):
            if a.dtype is not f16 or b.dtype is not f16 or out.dtype is not f16:
                raise TypeError(f"{name}: a, b and out must be float16")
            device = a.get_device()
            if device < 0 or b.get_device() != device or out.get_device() != device:
                raise ValueError(f"{name}: a, b and out must be on the same CUDA device")
            m, k = a.shape
            if b_col:
                n, kb = b.shape
            else:
                kb, n = b.shape
            if kb != k or out.shape != (m, n):
                raise ValueError(f"{name}: shapes a{tuple(a.shape)} b{tuple(b.shape)} out{tuple(out.shape)} "
                                 f"do not match C = A @ B with b_layout={'col' if b_col else 'row'}")
            lda, unit_a = a.stride()
            ldb, unit_b = b.stride()
            ldc, unit_c = out.stride()
            if unit_a != 1 or unit_b != 1 or unit_c != 1:
                raise ValueError(f"{name}: a, b and out need unit stride along their last dimension")
            stream = stream_of(device)
            ws = local.ws
            if ws[0] != device or ws[1] != stream:
                ws = bind_workspace(device, stream, 0)
            buf = local.args
            _pack(buf, 0, a.data_ptr(), b.data_ptr(), out.data_ptr(), m, n, k, lda, ldb, ldc, ws[2], ws[3],
                  raster, swizzle, splits, stream)
            status = c_run(local.addr)
            if status == HGEMM_ERR_WORKSPACE_TOO_SMALL:
                ws = bind_workspace(device, stream, self._ws_bytes(local.addr))
                buf.workspace, buf.workspace_bytes = ws[2], ws[3]
                status = c_run(local.addr)
            if status != HGEMM_OK:
                raise KernelLaunchError(name, status, f" for M={m} N={n} K={k}")
            return out

        fn_address = ctypes.cast(c_run, ctypes.c_void_p).value

        def fast_entry(a, b, out):
            """What the C fast path (kernels/fastpath) needs to repeat this launch for contiguous operands of these
            shapes on the current stream: (stream, entry point, argument struct without the pointers, pointer
            alignment, object to keep alive). Call it right after a successful run on the same thread (its
            workspace binding is reused)."""
            device = a.get_device()
            stream = stream_of(device)
            ws = local.ws
            if ws[0] != device or ws[1] != stream:
                ws = bind_workspace(device, stream, 0)
            m, k = a.shape
            n = b.shape[0] if b_col else b.shape[1]
            template = bytearray(_ARGS_LAYOUT.size)
            _pack(template, 0, 0, 0, 0, m, n, k, k, k if b_col else n, n, ws[2], ws[3], raster, swizzle, splits,
                  stream)
            return stream, fn_address, bytes(template), TMA_ALIGN_BYTES, ws[4]

        run.fast_entry = fast_entry
        return run

    def _bind_workspace(self, device: int, stream: int, nbytes: int):
        tensor = _workspace(device, stream, nbytes)
        ws = self._local.ws = (device, stream, tensor.data_ptr(), tensor.numel(), tensor)
        return ws

    def cache_stats(self) -> dict[str, int]:
        """This thread's launch-cache counts for this variant (hgemm_cache_stats): calls that hit as prepared, that
        were retargeted to moved operands, that prepared in full; first retargets checked, and refused."""
        stats = hgemm_cache_stats_t()
        fn = self._lib.hgemm_cache_stats
        fn.argtypes, fn.restype = [ctypes.POINTER(hgemm_cache_stats_t)], None
        fn(ctypes.byref(stats))
        return {name: getattr(stats, name) for name, _ in hgemm_cache_stats_t._fields_}

    def can_implement(self, a, b, out, *, raster=0, swizzle=0, splits=0) -> int:
        """0 when this variant can run the problem with these knobs, else a status code (see describe_status)."""
        s = self.fill(a, b, out, raster, swizzle, splits)
        s.workspace, s.workspace_bytes, s.stream = None, 0, None
        return self._can(self._local.addr)

    def workspace_bytes(self, a, b, out, *, raster=0, swizzle=0, splits=0) -> int:
        s = self.fill(a, b, out, raster, swizzle, splits)
        s.workspace, s.workspace_bytes, s.stream = None, 0, None
        return self._ws_bytes(self._local.addr)

    def __repr__(self) -> str:
        return f"CompiledKernel({self.name}, {self.path})"


_loaded: dict[str, CompiledKernel] = {}
_load_lock = threading.Lock()


def load(cfg: KernelConfig, build_if_missing: bool = True) -> CompiledKernel:
    """The loaded kernel of cfg (process-wide cache). Builds it when missing and nvcc is available."""
    kernel = _loaded.get(cfg.name)
    if kernel is not None:
        return kernel
    with _load_lock:
        kernel = _loaded.get(cfg.name)
        if kernel is not None:
            return kernel
        from kernels import build

        try:
            path = build.find_built(cfg)
        except Exception as exc:  # CUTLASS headers missing, ...
            raise KernelNotBuilt(f"{cfg.name}: cannot locate a build ({exc})") from exc
        if path is None:
            if not build_if_missing or build.nvcc_path() is None:
                raise KernelNotBuilt(f"{cfg.name}: not built (run `python -m kernels.build`) and cannot build here")
            result = build.build([cfg], jobs=1).variants[0]
            if result.error:
                raise KernelNotBuilt(f"{cfg.name}: build failed: {result.error}")
            path = result.path
        try:
            kernel = CompiledKernel(cfg, path)
        except OSError as exc:  # e.g. a restored object built against a newer libstdc++/glibc
            raise KernelNotBuilt(f"{cfg.name}: {path} does not load here ({exc})") from exc
        _loaded[cfg.name] = kernel
        return kernel
