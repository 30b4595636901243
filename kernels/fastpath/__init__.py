"""The cached dispatch in C (fastpath.c): one Python -> C call per GEMM once a shape's launch is prepared.

    table = fastpath.new_table()          # None where it cannot be built (no C compiler / Python headers) or
                                          # HGEMM_FASTPATH=0; the dispatcher then stays on its Python path
    table.put(m, n, k, b_layout, acc, device, stream, captured, fn_address, template, align, guarded, selection, keep)
    r = table.run(a, b, out, b_layout, acc)   # (out, selection), or an int: MISS, CANARY or LAUNCH_ERROR
    table.graph_choices = True            # key on whether the stream is capturing a CUDA graph (cuStreamIsCapturing)
    table.tensor_reader                   # True: operands are read from the at::Tensor (tensor_reader.cpp), not Python
    table.matrix_maker                    # True: an output the caller did not give is allocated there too

Built on first use with the system C compiler against this Python's headers (about a second), cached by a hash of
the source, the Python version and the compiler under the kernel cache dir, like the kernel variants. It needs no
CUDA and no torch headers: launches come in as C entry points (ctypes addresses) with prepared argument structs.

The operands' metadata (dtype, shape, strides, device, pointer) costs ~0.5 us per tensor through Python attributes.
Where torch's headers and a C++ compiler are at hand, `tensor_reader.cpp` reads it from the at::Tensor instead
(~10 ns): built on first use against the installed torch (~10-20 s, once: cached by a hash of the source, torch's
version and ABI, Python and the compiler), handed to every new table with its allocator for outputs (`a.new_empty`
and `data_ptr()` through Python cost 3-6 us of host time there); HGEMM_TENSOR_READER=0 keeps both in Python.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("fastpath.c")
READER_SOURCE = Path(__file__).with_name("tensor_reader.cpp")
MODULE = "kernels_fastpath"
MISS, CANARY, LAUNCH_ERROR = 0, 1, 2

_module = None
_failed: str | None = None
_lock = threading.Lock()
_reader: ctypes.CDLL | None = None   # tensor_reader.cpp's library, kept loaded
_reader_failed: str | None = None


def _switched_on(variable: str) -> bool:
    return os.environ.get(variable, "1").strip().lower() not in ("0", "false", "no", "off")


def enabled() -> bool:
    return _switched_on("HGEMM_FASTPATH")


def reader_enabled() -> bool:
    return _switched_on("HGEMM_TENSOR_READER")


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def cxx_compiler() -> str | None:
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def _key(cc: str, source: Path = SOURCE, *extra: str) -> str:
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    parts = [source.read_bytes(), sys.version.encode(), (sysconfig.get_config_var("EXT_SUFFIX") or "").encode(),
             "\n".join(version).encode(), *(part.encode() for part in extra)]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _compile(cmd: list[str], path: Path) -> Path:
    """Run the compiler into a temporary file next to `path`, then move it into place (atomic: concurrent builders,
    e.g. service workers, never load a partial file). Raises with the compiler's message on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    result = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    os.replace(tmp, path)
    return path


def build() -> Path:
    """The extension's path, compiled if this source/Python/compiler has no cached build yet. Raises on failure."""
    from kernels.build import cache_dir

    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc, gcc or clang; or $CC)")
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").is_file():
        raise RuntimeError(f"no Python headers at {include}")
    out_dir = cache_dir() / "fastpath"
    path = out_dir / f"{MODULE}-{_key(cc)}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    if path.is_file():
        return path
    out_dir.mkdir(parents=True, exist_ok=True)
    return _compile([cc, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall",
                     "-Werror=implicit-function-declaration", "-I", include, str(SOURCE)], path)


def build_reader() -> Path:
    """tensor_reader.cpp's shared library for the installed torch, compiled if not cached yet. Raises on failure."""
    import torch

    from kernels.build import cache_dir

    cxx = cxx_compiler()
    if cxx is None:
        raise RuntimeError("no C++ compiler (c++, g++ or clang++; or $CXX)")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    torch_lib = Path(torch.__file__).parent / "lib"
    path = cache_dir() / "fastpath" / f"tensor_reader-{_key(cxx, READER_SOURCE, torch.__version__, str(abi))}.so"
    if path.is_file():
        return path
    from torch.utils.cpp_extension import include_paths  # (imports setuptools: only when compiling)

    path.parent.mkdir(parents=True, exist_ok=True)
    includes = [arg for directory in (sysconfig.get_paths()["include"], *include_paths()) for arg in ("-I", directory)]
    return _compile([cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden", "-w",
                     f"-D_GLIBCXX_USE_CXX11_ABI={abi}", *includes, str(READER_SOURCE), "-L", str(torch_lib),
                     "-ltorch_python", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{torch_lib}"], path)


def _reader_library():
    """tensor_reader.cpp's library (built on first use), or None when disabled or unavailable (the reason is logged
    once)."""
    global _reader, _reader_failed
    if not reader_enabled():
        return None
    if _reader is None and _reader_failed is None:
        with _lock:
            if _reader is None and _reader_failed is None:
                try:
                    _reader = ctypes.CDLL(str(build_reader()))
                except Exception as error:  # the attribute path is always there
                    _reader_failed = str(error)
                    log.warning("tensor reader unavailable, the fast path reads operands through Python: %s", error)
    return _reader


def tensor_reader_address() -> int:
    """hgemm_read_tensor's address, or 0 when disabled or unavailable: tables then read operands through Python
    attributes."""
    library = _reader_library()
    return ctypes.cast(library.hgemm_read_tensor, ctypes.c_void_p).value if library is not None else 0


def matrix_maker_address() -> int:
    """hgemm_new_matrix's address (the same library), or 0: tables then allocate outputs through Python."""
    library = _reader_library()
    return ctypes.cast(library.hgemm_new_matrix, ctypes.c_void_p).value if library is not None else 0


def reader_unavailable_reason() -> str | None:
    return _reader_failed


def load():
    """The extension module (built on first use), or None when unavailable (the reason is logged once)."""
    global _module, _failed
    if _module is not None or _failed is not None:
        return _module
    with _lock:
        if _module is None and _failed is None:
            try:
                path = build()
                spec = importlib.util.spec_from_file_location(MODULE, path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _module = module
            except Exception as error:  # the Python dispatch path is always there
                _failed = str(error)
                log.warning("GEMM fast path unavailable, using the Python dispatch path: %s", error)
    return _module


def unavailable_reason() -> str | None:
    return _failed


@functools.lru_cache(maxsize=None)
def capture_status_address() -> int:
    """The address of the CUDA driver's cuStreamIsCapturing (what a table with graph choices asks), 0 without a
    driver: such a table then leaves every call to the Python path, which asks torch."""
    try:
        return ctypes.cast(ctypes.CDLL("libcuda.so.1").cuStreamIsCapturing, ctypes.c_void_p).value or 0
    except (OSError, AttributeError):
        return 0


def new_table(stream_of=None, *, allow_cpu: bool = False, capture_status: int | None = None,
              tensor_reader: bool = True):
    """A FastTable (stream_of: device index -> torch's current raw stream; capture_status: the address of a function
    with cuStreamIsCapturing's ABI, default the driver's; tensor_reader: read operands from, and allocate outputs as,
    the at::Tensor where tensor_reader.cpp builds), or None when disabled or unavailable."""
    if not enabled():
        return None
    module = load()
    if module is None:
        return None
    import torch

    if stream_of is None:
        from kernels.runtime import _stream_getter

        stream_of = _stream_getter()
    if capture_status is None:
        capture_status = capture_status_address()
    return module.FastTable(stream_of, torch.float16, allow_cpu=allow_cpu, capture_status=capture_status,
                            tensor_reader=tensor_reader_address() if tensor_reader else 0,
                            matrix_maker=matrix_maker_address() if tensor_reader else 0)


__all__ = ["new_table", "capture_status_address", "load", "build", "build_reader", "tensor_reader_address",
           "matrix_maker_address", "enabled", "reader_enabled", "unavailable_reason", "reader_unavailable_reason",
           "MISS", "CANARY", "LAUNCH_ERROR"]
