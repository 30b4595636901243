"""The cached dispatch in C (fastpath.c): one Python -> C call per GEMM once a shape's launch is prepared.

    table = fastpath.new_table()          # None where it cannot be built (no C compiler / Python headers) or
                                          # HGEMM_FASTPATH=0; the dispatcher then stays on its Python path
    table.put(m, n, k, b_layout, acc, device, stream, captured, fn_address, template, align, guarded, selection, keep)
    r = table.run(a, b, out, b_layout, acc)   # (out, selection), or an int: MISS, CANARY or LAUNCH_ERROR
    table.graph_choices = True            # key on whether the stream is capturing a CUDA graph (cuStreamIsCapturing)

Built on first use with the system C compiler against this Python's headers (about a second), cached by a hash of
the source, the Python version and the compiler under the kernel cache dir, like the kernel variants. It needs no
CUDA and no torch headers: launches come in as C entry points (ctypes addresses) with prepared argument structs.
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
MODULE = "kernels_fastpath"
MISS, CANARY, LAUNCH_ERROR = 0, 1, 2

_module = None
_failed: str | None = None
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("HGEMM_FASTPATH", "1").strip().lower() not in ("0", "false", "no", "off")


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _key(cc: str) -> str:
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    parts = [SOURCE.read_bytes(), sys.version.encode(), (sysconfig.get_config_var("EXT_SUFFIX") or "").encode(),
             "\n".join(version).encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    cmd = [cc, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Werror=implicit-function-declaration",
           "-I", include, "-o", str(tmp), str(SOURCE)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    os.replace(tmp, path)  # atomic: concurrent builders (service workers) never load a partial file
    return path


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


def new_table(stream_of=None, *, allow_cpu: bool = False, capture_status: int | None = None):
    """A FastTable (stream_of: device index -> torch's current raw stream; capture_status: the address of a function
    with cuStreamIsCapturing's ABI, default the driver's), or None when disabled or unavailable."""
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
    return module.FastTable(stream_of, torch.float16, allow_cpu=allow_cpu, capture_status=capture_status)


__all__ = ["new_table", "capture_status_address", "load", "build", "enabled", "unavailable_reason", "MISS", "CANARY", "LAUNCH_ERROR"]
