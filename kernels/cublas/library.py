"""Build (once, content-hash cached by kernels.build) and load our cuBLAS wrapper `arms.cu`, with ctypes bindings.

The shared object links libcublas.so.13 / libcublasLt.so.13; `import torch` has already loaded those on a CUDA
machine, so the wrapper shares torch's copy (same SONAME) instead of loading a second one.
"""
from __future__ import annotations

import ctypes
import threading
from pathlib import Path

ARMS_DIR = Path(__file__).resolve().parent
SOURCE = ARMS_DIR / "arms.cu"
LIBRARY_NAME = "hgemm_cublas_arms"
ABI_VERSION = 1  # HGEMM_ARMS_ABI_VERSION in arms.h
# arms.cu holds no device code; the gencode only satisfies nvcc's command line.
GENCODE = ("-gencode=arch=compute_90,code=sm_90",)
CUDA_R_16F, CUDA_R_32F = 2, 0  # cudaDataType_t values (used by the invalid-descriptor test hook)


class CublasError(RuntimeError):
    """A cuBLAS / cuBLASLt / CUDA call in the wrapper returned a failure status (nothing was computed)."""

    def __init__(self, call: str, status: int, detail: str = ""):
        self.call, self.status = call, status
        super().__init__(f"{call} failed with status {status} ({status_string(status)}){detail}")


class AlgoInfo(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "algo_id", "tile_id", "stages_id", "splitk_num", "reduction_scheme", "cta_swizzling", "custom_option",
        "cluster_shape_id")] + [("workspace_bytes", ctypes.c_uint64), ("waves_count", ctypes.c_float)]


_c_int, _i64, _ptr, _size = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_size_t
_SIGNATURES = {
    "hgemm_arms_abi_version": ([], _c_int),
    "hgemm_arms_status_string": ([_c_int], ctypes.c_char_p),
    "hgemm_gemmex": ([_c_int, _c_int, _c_int, _i64, _i64, _i64, _ptr, _ptr, _ptr, _ptr, _size, _ptr], _c_int),
    "hgemm_lt_plan": ([_c_int, _c_int, _c_int, _i64, _i64, _i64, ctypes.c_uint32, _size, _c_int, _c_int,
                       ctypes.POINTER(ctypes.c_void_p)], _c_int),
    "hgemm_lt_algo_count": ([_ptr], _c_int),
    "hgemm_lt_algo_info": ([_ptr, _c_int, ctypes.POINTER(AlgoInfo)], _c_int),
    "hgemm_lt_run": ([_ptr, _c_int, _ptr, _ptr, _ptr, _ptr, _size, _ptr], _c_int),
}

_library: ctypes.CDLL | None = None
_lock = threading.Lock()


def compile_arms() -> Path:
    """Compile arms.cu (or find it in the build cache) and return the .so path. Raises BuildError / CublasNotFound."""
    from kernels.build import compile_tu
    from kernels.cublas.locate import LIBRARIES, locate

    toolchain = locate()
    # Libraries go through `libs` so they land after the source on the link line (--as-needed would drop them
    # otherwise); the search path and run path go through extra_flags.
    return compile_tu(SOURCE.read_text(), LIBRARY_NAME, gencode=list(GENCODE), extra_flags=toolchain.search_flags(),
                      include_dirs=(ARMS_DIR, toolchain.include_dir), libs=LIBRARIES)


def bind(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    for name, (argtypes, restype) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    found = lib.hgemm_arms_abi_version()
    if found != ABI_VERSION:
        raise RuntimeError(f"{path}: ABI version {found}, expected {ABI_VERSION} (stale build?)")
    return lib


def arms_library() -> ctypes.CDLL:
    """The loaded wrapper (built on first use). Import torch first so its cuBLAS is the one we share."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                import torch  # noqa: F401  (loads libcublas.so.13 / libcublasLt.so.13 before our .so needs them)

                _library = bind(compile_arms())
    return _library


def status_string(status: int) -> str:
    if _library is None:
        return "see kernels/cublas/arms.h"
    return _library.hgemm_arms_status_string(status).decode()
