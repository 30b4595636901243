"""Fetch cuBLAS headers (and the libraries to link against) from the `nvidia-cublas` wheel into a cache folder.

Machines without a CUDA toolkit's cuBLAS (CPU CI, laptops) use this to compile-check `kernels/cublas/arms.cu`.
Only `include/` and `lib/libcublas*.so*` are extracted; the wheel itself is deleted afterwards.

    python -m kernels.cublas.fetch_headers            # -> $HGEMM_CUBLAS_HOME or ~/.cache/tuned-hgemm/cublas-<version>
    python -m kernels.cublas.fetch_headers --headers-only --dest /some/dir

The result is found by `kernels.cublas.locate` (it looks at the same default folder).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# The cuBLAS of CUDA 13.0-era torch builds; headers of any 13.x link against any libcublas.so.13 (stable ABI).
CUBLAS_WHEEL_VERSION = "13.1.0.3"


def default_dest(version: str = CUBLAS_WHEEL_VERSION) -> Path:
    env = os.environ.get("HGEMM_CUBLAS_HOME")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tuned-hgemm" / f"cublas-{version}"


def _wanted(member: str, headers_only: bool) -> str | None:
    """Map a wheel member (e.g. 'nvidia/cu13/include/cublas_v2.h') to its place under dest, or None to skip it."""
    parts = member.split("/")
    if len(parts) < 4 or parts[0] != "nvidia" or member.endswith("/"):
        return None
    kind, rest = parts[2], "/".join(parts[3:])
    if kind == "include":
        return f"include/{rest}"
    if kind == "lib" and not headers_only and rest.startswith("libcublas") and ".so" in rest:
        return f"lib/{rest}"
    return None


def extract(wheel: Path, dest: Path, headers_only: bool = False) -> list[Path]:
    written = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            rel = _wanted(info.filename, headers_only)
            if rel is None:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            written.append(target)
    if not any(p.name == "cublas_v2.h" for p in written):
        raise RuntimeError(f"{wheel.name} holds no nvidia/*/include/cublas_v2.h: unexpected wheel layout")
    _add_link_names(dest / "lib")
    return written


def _add_link_names(lib_dir: Path) -> None:
    """The wheel ships only libcublas.so.13; `-lcublas` needs the unversioned name, so add it as a symlink."""
    if not lib_dir.is_dir():
        return
    for versioned in sorted(lib_dir.glob("lib*.so.*")):
        plain = lib_dir / (versioned.name.split(".so.")[0] + ".so")
        if not plain.exists():
            plain.symlink_to(versioned.name)


def fetch(dest: Path, version: str = CUBLAS_WHEEL_VERSION, headers_only: bool = False) -> Path:
    marker = dest / ("HEADERS_OK" if headers_only else "FETCH_OK")
    if marker.exists() or (dest / "FETCH_OK").exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cublas-wheel-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", tmp,
               f"nvidia-cublas=={version}"]
        subprocess.run(cmd, check=True)
        wheels = list(Path(tmp).glob("nvidia_cublas-*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(f"pip download left {wheels!r}, expected one nvidia_cublas wheel")
        extract(wheels[0], dest, headers_only)
    marker.write_text(f"nvidia-cublas=={version}\n")
    return dest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default=CUBLAS_WHEEL_VERSION, help="nvidia-cublas wheel version")
    p.add_argument("--dest", type=Path, default=None, help="target folder (default: $HGEMM_CUBLAS_HOME or ~/.cache)")
    p.add_argument("--headers-only", action="store_true", help="skip the libraries (compile-only checks)")
    args = p.parse_args(argv)
    dest = fetch(args.dest or default_dest(args.version), args.version, args.headers_only)
    print(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
