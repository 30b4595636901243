"""The cuBLAS wrapper without a GPU: header fetch/extract and locate logic, and (slow) a real compile + link + load of
arms.cu with the local nvcc against the cuBLAS headers/libraries of the `nvidia-cublas` wheel, whose status reporting
is then exercised on calls that fail before touching a GPU.

The compile test needs `python -m kernels.cublas.fetch_headers` to have run (CI does it; see docs/dispatch.md)."""
from __future__ import annotations

import zipfile

import pytest

from kernels.cublas import fetch_headers, locate

# ---- fetch / locate logic (fast, no network) --------------------------------------------------------------------


def fake_wheel(path, layout="cu13"):
    with zipfile.ZipFile(path, "w") as zf:
        for name in ("cublas_v2.h", "cublasLt.h", "cublas_api.h"):
            zf.writestr(f"nvidia/{layout}/include/{name}", f"// {name}\n")
        zf.writestr(f"nvidia/{layout}/lib/libcublas.so.13", b"\x7fELF cublas")
        zf.writestr(f"nvidia/{layout}/lib/libcublasLt.so.13", b"\x7fELF cublasLt")
        zf.writestr(f"nvidia/{layout}/lib/libnvblas.so.13", b"not needed")
        zf.writestr("nvidia_cublas-13.1.0.3.dist-info/METADATA", "Name: nvidia-cublas\n")
    return path


@pytest.mark.parametrize("layout", ["cu13", "cublas"])
def test_extract_takes_headers_and_cublas_libraries_only(tmp_path, layout):
    dest = tmp_path / "out"
    fetch_headers.extract(fake_wheel(tmp_path / "w.whl", layout), dest)
    assert sorted(p.name for p in (dest / "include").iterdir()) == ["cublasLt.h", "cublas_api.h", "cublas_v2.h"]
    libs = sorted(p.name for p in (dest / "lib").iterdir())
    assert libs == ["libcublas.so", "libcublas.so.13", "libcublasLt.so", "libcublasLt.so.13"]
    assert (dest / "lib" / "libcublas.so").resolve() == (dest / "lib" / "libcublas.so.13").resolve()


def test_extract_headers_only(tmp_path):
    dest = tmp_path / "out"
    fetch_headers.extract(fake_wheel(tmp_path / "w.whl"), dest, headers_only=True)
    assert (dest / "include" / "cublas_v2.h").is_file() and not (dest / "lib").exists()


def test_extract_rejects_a_wheel_without_headers(tmp_path):
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("nvidia/cu13/lib/libcublas.so.13", b"x")
    with pytest.raises(RuntimeError, match="cublas_v2.h"):
        fetch_headers.extract(wheel, tmp_path / "out")


def test_locate_makes_plain_link_names_for_versioned_libraries(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "include").mkdir(parents=True)
    (home / "lib").mkdir()
    for h in locate.HEADERS:
        (home / "include" / h).write_text("//")
    for name in locate.LIBRARIES:
        (home / "lib" / f"lib{name}.so.13").write_bytes(b"x")
    monkeypatch.setenv("HGEMM_CUBLAS_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tc = locate.locate()
    assert tc.origin == "HGEMM_CUBLAS_HOME" and tc.include_dir == home / "include"
    assert tc.lib_dir == (home / "lib").resolve()
    for name in locate.LIBRARIES:
        assert (tc.link_dir / f"lib{name}.so").resolve() == (home / "lib" / f"lib{name}.so.13").resolve()
    flags = tc.search_flags()
    assert flags[0] == f"-L{tc.link_dir}" and str(tc.lib_dir) in flags[1]


def test_locate_headers_only_when_libraries_are_not_required(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "include").mkdir(parents=True)
    for h in locate.HEADERS:
        (home / "include" / h).write_text("//")
    monkeypatch.setenv("HGEMM_CUBLAS_HOME", str(home))
    tc = locate.locate(require_libraries=False)
    assert tc.include_dir == home / "include"
    if tc.origin == "HGEMM_CUBLAS_HOME":  # (a machine with a full cuBLAS elsewhere still finds it first when libs
        assert tc.link_dir is None        # are required, so only this half is asserted)
        with pytest.raises(locate.CublasNotFound):
            tc.search_flags()


# ---- the real compile (slow) ------------------------------------------------------------------------------------


def _toolchain_or_skip():
    from kernels import build

    if build.nvcc_path() is None:
        pytest.skip("no nvcc on this machine")
    try:
        return locate.locate()
    except locate.CublasNotFound as error:
        pytest.skip(f"no cuBLAS headers/libraries: run `python -m kernels.cublas.fetch_headers` ({error})")


@pytest.mark.slow
def test_arms_compile_link_and_report_statuses_without_a_gpu():
    import ctypes

    import torch

    from kernels.cublas import library

    _toolchain_or_skip()
    path = library.compile_arms()  # compile_tu: raises BuildError with nvcc's log on failure
    lib = library.bind(path)        # dlopen resolves every cuBLAS symbol now, and the ABI version is checked
    names = {s: lib.hgemm_arms_status_string(s).decode() for s in (0, -1, -2, -3, -4, -5, -6, 7, 15, 100100)}
    assert names[0] == "success" and all(names[s] for s in names)
    assert "bad argument" in names[-1] and "workspace" in names[-4]
    assert "unsupported" in names[7] or "not supported" in names[7]  # CUBLAS_STATUS_INVALID_VALUE's text
    # Calls rejected before any CUDA work (safe on any machine): each status comes back, nothing runs.
    assert lib.hgemm_gemmex(0, 0, 0, 4, 4, 4, None, None, None, None, 0, None) == -1     # null operands
    assert lib.hgemm_gemmex(0, 0, 7, 4, 4, 4, 256, 256, 256, None, 0, None) == -1       # unknown acc
    assert lib.hgemm_gemmex(0, 2, 0, 4, 4, 4, 256, 256, 256, None, 0, None) == -1       # unknown layout
    assert lib.hgemm_gemmex(0, 0, 0, 0, 4, 4, 256, 256, 256, None, 0, None) == -1       # M = 0
    assert lib.hgemm_gemmex(0, 0, 0, 1 << 31, 4, 4, 256, 256, 256, None, 0, None) == -6  # beyond int32
    plan = ctypes.c_void_p()
    assert lib.hgemm_lt_plan(0, 0, 0, 4, 4, 4, 3, 1 << 25, 32, -1, ctypes.byref(plan)) == -1  # alignment 3
    assert lib.hgemm_lt_plan(0, 0, 0, 4, 4, 4, 256, 1 << 25, -1, -1, ctypes.byref(plan)) == -1  # top_n < 0
    assert lib.hgemm_lt_run(None, 0, 256, 256, 256, None, 0, None) == -1
    assert lib.hgemm_lt_algo_count(None) == 0
    if not torch.cuda.is_available():  # no driver/GPU: the CUDA error is reported, not swallowed
        status = lib.hgemm_lt_plan(0, 0, 0, 4, 4, 4, 256, 1 << 25, 32, -1, ctypes.byref(plan))
        assert status >= 100000 and plan.value is None
        assert lib.hgemm_gemmex(0, 0, 0, 4, 4, 4, 256, 256, 256, None, 0, None) >= 100000
