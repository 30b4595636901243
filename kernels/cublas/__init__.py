"""cuBLAS and cuBLASLt as arms with the call signature of a built variant: arm(a, b, out, *, b_layout, acc).

    CublasArm("gemmex")            cublasGemmEx, TN form for b_layout="col", NN form for "row"   (dispatch: "cublas")
    CublasArm("gemmex_tn")         cublasGemmEx TN only (b_layout="col"); "gemmex_nn": NN only (b_layout="row")
    CublasArm("lt_heuristic")      cuBLASLt with the heuristic's top-1 algorithm                  (dispatch: "cublaslt")
    CublasArm("lt_algo", i)        cuBLASLt with algorithm i of the top-N heuristic list (autotuning: time each i)
    CublasArm("lt_implicit")       cuBLASLt with no algorithm passed (cuBLASLt decides inside the call)
    lt_algorithms(m, n, k, ...)    the top-N list itself (what each index means)
    arm.launcher(b_layout, acc)    run(a, b, out) with the flags bound: the hot path (one struct, one ctypes call)

All launch on torch's current stream with a preallocated per-stream workspace (32 MiB, like torch on Hopper), so they
can be captured in CUDA graphs (run once before capturing: handles and plans are created on first use). Every
failure raises CublasError with the status; nothing is ever silently skipped. Nothing here touches CUDA at import.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass

import torch

from kernels.cublas.library import CUDA_R_16F, CUDA_R_32F, AlgoInfo, CublasError, arms_library

WORKSPACE_BYTES = 32 << 20
DEFAULT_TOP_N = 32
KINDS = {  # kind -> the kernel name dispatch reports
    "gemmex": "cublas", "gemmex_tn": "cublas", "gemmex_nn": "cublas",
    "lt_heuristic": "cublaslt", "lt_algo": "cublaslt", "lt_implicit": "cublaslt",
}
_ACC = {"f32": 0, "f16": 1}
_B_COL = {"row": 0, "col": 1}
_REQUIRED_LAYOUT = {"gemmex_tn": "col", "gemmex_nn": "row"}


def _flag(table: dict, value: str, what: str) -> int:
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{what} must be one of {sorted(table)}, got {value!r}") from None


def check_operands(a, b, out, b_col: int) -> tuple[int, int, int]:
    """(m, n, k) of C[m,n] = A[m,k] @ B, after checking dtype, shapes, contiguity and device. Raises otherwise."""
    f16 = torch.float16
    if a.dtype != f16 or b.dtype != f16 or out.dtype != f16:
        raise TypeError(f"a, b and out must be float16, got {a.dtype}, {b.dtype}, {out.dtype}")
    if a.dim() != 2 or b.dim() != 2 or out.dim() != 2:
        raise ValueError("a, b and out must be 2-D")
    m, k = a.shape
    n, kb = (b.shape[0], b.shape[1]) if b_col else (b.shape[1], b.shape[0])
    if kb != k or tuple(out.shape) != (m, n):
        layout = "col (N x K)" if b_col else "row (K x N)"
        raise ValueError(f"shapes a{tuple(a.shape)} b{tuple(b.shape)} out{tuple(out.shape)} do not match "
                         f"C = A @ B with b_layout={layout}")
    if not (a.is_contiguous() and b.is_contiguous() and out.is_contiguous()):
        raise ValueError("a, b and out must be contiguous (row-major)")
    device = a.get_device()
    if device < 0 or b.get_device() != device or out.get_device() != device:
        raise ValueError("a, b and out must be on the same CUDA device")
    return m, n, k


_runtime_hooks = None  # (stream getter, workspace getter) from kernels.runtime, bound on first call


def _hooks():
    """torch's current raw stream per device, and the per-(device, stream) workspace shared with built variants."""
    global _runtime_hooks
    if _runtime_hooks is None:
        from kernels.runtime import _stream_getter, _workspace

        _runtime_hooks = (_stream_getter(), _workspace)
    return _runtime_hooks


_plans: dict[tuple, int] = {}


def _plan(device: int, b_col: int, acc: int, m: int, n: int, k: int, align: int, workspace_bytes: int, top_n: int,
          scale_type_override: int) -> int:
    """The cuBLASLt plan pointer for this problem (created and cached in C, memoized here)."""
    key = (device, b_col, acc, m, n, k, align, workspace_bytes, top_n, scale_type_override)
    plan = _plans.get(key)
    if plan is None:
        out = ctypes.c_void_p()
        status = arms_library().hgemm_lt_plan(device, b_col, acc, m, n, k, align, workspace_bytes, top_n,
                                              scale_type_override, ctypes.byref(out))
        if status:
            raise CublasError("cuBLASLt plan (descriptors + heuristic)", status, f" for M={m} N={n} K={k}")
        plan = _plans[key] = out.value
    return plan


class ArmsCall(ctypes.Structure):
    """hgemm_arms_call_t of arms.h: one call of hgemm_gemmex_call / hgemm_lt_call, passed by pointer."""
    _fields_ = [("A", ctypes.c_void_p), ("B", ctypes.c_void_p), ("C", ctypes.c_void_p),
                ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t), ("stream", ctypes.c_void_p),
                ("plan", ctypes.c_void_p), ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("device", ctypes.c_int32), ("b_col", ctypes.c_int32), ("acc", ctypes.c_int32),
                ("algo_index", ctypes.c_int32)]


# The struct's bytes in one pack_into (a dozen ctypes argument conversions cost ~2 us; this and one pointer ~0.5 us).
_CALL_LAYOUT = struct.Struct("=7Q3q4i")
assert _CALL_LAYOUT.size == ctypes.sizeof(ArmsCall) and ArmsCall.device.offset == 80


class _PerThread(threading.local):
    """This thread's call struct (C reads it after ctypes released the GIL, so threads must not share one) and the
    workspace it used last."""

    def __init__(self):
        self.call = ArmsCall()
        self.addr = ctypes.addressof(self.call)
        self.ws = (-1, -1, -1, 0, None)  # (device, stream, requested bytes, pointer, tensor kept alive)


_per_thread = _PerThread()
_entry_points = None  # (hgemm_gemmex_call, hgemm_lt_call) of the loaded library


def _calls():
    global _entry_points
    lib = arms_library()
    if _entry_points is None or _entry_points[0] is not lib:
        gemmex, lt = lib.hgemm_gemmex_call, lib.hgemm_lt_call
        for fn in (gemmex, lt):
            fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_int
        _entry_points = (lib, gemmex, lt)
    return _entry_points[1], _entry_points[2]


def _bound_workspace(device: int, stream: int, nbytes: int) -> int:
    """The pointer of the (device, stream) workspace, remembered per thread so a repeated call skips the lookup."""
    local = _per_thread
    ws = local.ws
    if ws[0] != device or ws[1] != stream or ws[2] != nbytes:
        tensor = (_runtime_hooks or _hooks())[1](device, stream, nbytes)
        ws = local.ws = (device, stream, nbytes, tensor.data_ptr(), tensor)
    return ws[3]


class CublasArm:
    """One cuBLAS / cuBLASLt arm. Call: arm(a, b, out, *, b_layout="row", acc="f32") -> out (on the current stream).

    scale_type_override is a test hook: a cudaDataType_t for the cuBLASLt scale type (e.g. CUDA_R_16F with
    acc="f32" makes an invalid descriptor, which must raise CublasError rather than return without computing)."""

    def __init__(self, kind: str = "gemmex", algo_index: int = 0, *, top_n: int = DEFAULT_TOP_N,
                 workspace_bytes: int = WORKSPACE_BYTES, scale_type_override: int = -1):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        if kind == "lt_algo" and not 0 <= algo_index < top_n:
            raise ValueError(f"algo_index {algo_index} outside the top-{top_n} heuristic list")
        if top_n < 1 or workspace_bytes < 0:
            raise ValueError("top_n must be >= 1 and workspace_bytes >= 0")
        self.kind, self.name = kind, KINDS[kind]
        self.algo_index = algo_index if kind == "lt_algo" else (0 if kind == "lt_heuristic" else -1)
        self.top_n = 0 if kind == "lt_implicit" else (top_n if kind == "lt_algo" else 1)
        self.workspace_bytes = workspace_bytes
        self.scale_type_override = scale_type_override
        self.label = f"{kind}[{algo_index}]" if kind == "lt_algo" else kind
        self._launchers: dict[tuple[str, str], object] = {}  # (b_layout, acc) -> run(a, b, out)

    def __call__(self, a, b, out, *, b_layout: str = "row", acc: str = "f32"):
        run = self._launchers.get((b_layout, acc)) or self.launcher(b_layout, acc)
        return run(a, b, out)

    def launcher(self, b_layout: str = "row", acc: str = "f32"):
        """run(a, b, out) -> out for one layout and accumulator: the per-call path with everything that does not
        depend on the operands decided here once (flags, layout check, entry point). Operands are still checked on
        every call (dtype, shapes, contiguity, device: a wrong one would compute garbage, not fail)."""
        key = (b_layout, acc)
        run = self._launchers.get(key)
        if run is None:
            run = self._launchers[key] = self._make_launcher(b_layout, acc)
        return run

    def _make_launcher(self, b_layout: str, acc: str):
        b_col, acc_flag = _flag(_B_COL, b_layout, "b_layout"), _flag(_ACC, acc, "acc")
        required = _REQUIRED_LAYOUT.get(self.kind)
        if required and b_layout != required:
            raise ValueError(f"{self.kind} computes with b_layout={required!r} only, got {b_layout!r}")
        is_lt = self.name == "cublaslt"
        call = f"cublasLtMatmul({self.label})" if is_lt else "cublasGemmEx"
        entry: list = []  # the C entry point, bound on the first call (building the library takes a while)
        ws_nbytes, algo_index = self.workspace_bytes, self.algo_index
        top_n, scale_override = self.top_n, self.scale_type_override
        stream_of = (_runtime_hooks or _hooks())[0]
        plans: dict[tuple, int] = {}
        f16, pack, local = torch.float16, _CALL_LAYOUT.pack_into, _per_thread

        def run(a, b, out):
            try:
                m, k = a.shape
                if b_col:
                    n, kb = b.shape
                else:
                    kb, n = b.shape
                device = a.get_device()
                bad = (a.dtype is not f16 or b.dtype is not f16 or out.dtype is not f16 or kb != k
                       or out.shape != (m, n) or not (a.is_contiguous() and b.is_contiguous() and out.is_contiguous())
                       or device < 0 or b.get_device() != device or out.get_device() != device)
            except ValueError:  # not 2-D
                bad = True
            if bad:  # the slow path names the problem
                check_operands(a, b, out, b_col)
                raise ValueError("operands rejected")  # (unreachable: check_operands raised)
            stream = stream_of(device)
            ws_ptr = _bound_workspace(device, stream, ws_nbytes) if ws_nbytes else 0
            a_ptr, b_ptr, c_ptr = a.data_ptr(), b.data_ptr(), out.data_ptr()
            plan = 0
            if is_lt:  # the plan is made for the pointers' alignment (largest power of two dividing all, <= 256)
                bits = a_ptr | b_ptr | c_ptr
                align = min(bits & -bits, 256) if bits else 256
                plan = plans.get((device, m, n, k, align))
                if plan is None:
                    plan = plans[(device, m, n, k, align)] = _plan(device, b_col, acc_flag, m, n, k, align,
                                                                   ws_nbytes, top_n, scale_override)
            call_struct = local.call
            pack(call_struct, 0, a_ptr, b_ptr, c_ptr, ws_ptr, ws_nbytes, stream, plan, m, n, k, device, b_col,
                 acc_flag, algo_index)
            if not entry:
                entry.append(_calls()[1 if is_lt else 0])
            status = entry[0](local.addr)
            if status:
                raise CublasError(call, status, f" for M={m} N={n} K={k} b_layout={b_layout} acc={acc}")
            return out

        def fast_entry(a, b, out):
            """(stream, entry point, call struct without the pointers, pointer alignment, object kept alive) for the
            C fast path (kernels/fastpath), for contiguous operands of these shapes. Call it right after a successful
            run: the workspace and the cuBLASLt plan of that run are reused."""
            m, k = a.shape
            n = b.shape[0] if b_col else b.shape[1]
            device = a.get_device()
            stream = stream_of(device)
            ws_ptr = _bound_workspace(device, stream, ws_nbytes) if ws_nbytes else 0
            keep = _per_thread.ws[4] if ws_nbytes else None
            plan, align = 0, 0
            if is_lt:  # the plan of the run just made holds for pointers at least this aligned
                bits = a.data_ptr() | b.data_ptr() | out.data_ptr()
                align = min(bits & -bits, 256) if bits else 256
                plan = plans.get((device, m, n, k, align))
                if plan is None:
                    return None
            if not entry:
                entry.append(_calls()[1 if is_lt else 0])
            template = bytearray(_CALL_LAYOUT.size)
            pack(template, 0, 0, 0, 0, ws_ptr, ws_nbytes, stream, plan, m, n, k, device, b_col, acc_flag, algo_index)
            return stream, ctypes.cast(entry[0], ctypes.c_void_p).value, bytes(template), align, keep

        run.fast_entry = fast_entry

        return run

    def __repr__(self) -> str:
        return f"CublasArm({self.label})"


@dataclass(frozen=True)
class LtAlgorithm:
    """One entry of the cuBLASLt heuristic list (index = what CublasArm("lt_algo", index) runs)."""
    index: int
    algo_id: int
    tile_id: int
    stages_id: int
    splitk_num: int
    reduction_scheme: int
    cta_swizzling: int
    custom_option: int
    cluster_shape_id: int
    workspace_bytes: int
    waves_count: float

    def identity(self) -> dict:
        """What names this algorithm in any list (kernels.tuned_tables.LT_IDENTITY): a table entry's "algo"."""
        from kernels.tuned_tables import LT_IDENTITY

        return {key: int(getattr(self, key)) for key in LT_IDENTITY}


def lt_algorithms(m: int, n: int, k: int, b_layout: str = "row", acc: str = "f32", top_n: int = DEFAULT_TOP_N, *,
                  device: int | None = None, workspace_bytes: int = WORKSPACE_BYTES,
                  align_bytes: int = 256) -> list[LtAlgorithm]:
    """The top-N cuBLASLt heuristic algorithms for a problem (fewer if the heuristic knows fewer). align_bytes is the
    operand pointer alignment assumed (fresh torch allocations are 256-byte aligned, which CublasArm then matches)."""
    device = torch.cuda.current_device() if device is None else device
    plan = _plan(device, _flag(_B_COL, b_layout, "b_layout"), _flag(_ACC, acc, "acc"), m, n, k, align_bytes,
                 workspace_bytes, top_n, -1)
    lib = arms_library()
    out = []
    for index in range(lib.hgemm_lt_algo_count(plan)):
        info = AlgoInfo()
        status = lib.hgemm_lt_algo_info(plan, index, ctypes.byref(info))
        if status:
            raise CublasError("cublasLtMatmulAlgoConfigGetAttribute", status)
        out.append(LtAlgorithm(index, *(getattr(info, f) for f, _ in AlgoInfo._fields_)))
    return out


__all__ = ["CublasArm", "CublasError", "ArmsCall", "LtAlgorithm", "lt_algorithms", "check_operands", "KINDS",
           "WORKSPACE_BYTES",
           "DEFAULT_TOP_N", "CUDA_R_16F", "CUDA_R_32F"]
