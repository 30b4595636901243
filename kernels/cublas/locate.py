"""Find cuBLAS headers and the libraries to link `arms.cu` against.

Looked at, in order (the first folder holding `cublas_v2.h` and `cublasLt.h` wins):
  1. $HGEMM_CUBLAS_HOME              (`include/`, `lib/`), e.g. what `python -m kernels.cublas.fetch_headers` wrote
  2. the `nvidia` pip packages next to torch: `nvidia/cu13/{include,lib}`, `nvidia/cublas/{include,lib}` -- the very
     libcublas.so.13 that `import torch` loads on the GPU machine, so headers and library match
  3. the CUDA toolkit: $CUDA_HOME or /usr/local/cuda (`include/`, `lib64/`, `targets/*/lib`)
  4. the default folder of `fetch_headers` (~/.cache/tuned-hgemm/cublas-<version>)

pip wheels ship only `libcublas.so.13`; `-lcublas` needs the plain name, so link names are made as symlinks in a
cache folder of ours (never inside site-packages).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from kernels.cublas.fetch_headers import default_dest

LIBRARIES = ("cublas", "cublasLt")
HEADERS = ("cublas_v2.h", "cublasLt.h")


class CublasNotFound(RuntimeError):
    """No folder with the cuBLAS headers (and, when asked, the libraries) was found."""


@dataclass(frozen=True)
class CublasToolchain:
    origin: str                  # which candidate it came from (for messages and build reports)
    include_dir: Path
    lib_dir: Path | None         # where libcublas.so.13 / libcublasLt.so.13 really are
    link_dir: Path | None        # a folder holding `libcublas.so` / `libcublasLt.so` (plain link names)

    def search_flags(self) -> list[str]:
        """nvcc flags that let `-lcublas -lcublasLt` resolve at link time, and find the real files again at run time
        when torch has not loaded them already."""
        if self.link_dir is None or self.lib_dir is None:
            raise CublasNotFound(f"{self.origin}: headers only, no cuBLAS libraries to link against")
        return [f"-L{self.link_dir}", f"-Xlinker=-rpath,{self.lib_dir}"]


def _candidates() -> list[tuple[str, Path, list[Path]]]:
    """(origin, include dir, library dirs) in search order."""
    out = []
    env = os.environ.get("HGEMM_CUBLAS_HOME")
    if env:
        out.append(("HGEMM_CUBLAS_HOME", Path(env) / "include", [Path(env) / "lib"]))
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13", "cublas"):
            base = Path(root) / sub
            out.append((f"pip package nvidia/{sub}", base / "include", [base / "lib"]))
    cuda = Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda")
    out.append((f"CUDA toolkit {cuda}", cuda / "include",
                [cuda / "lib64", cuda / "lib", *sorted((cuda / "targets").glob("*/lib"))]))
    fetched = default_dest()
    out.append((f"fetched wheel {fetched}", fetched / "include", [fetched / "lib"]))
    return out


def _find_library(lib_dirs: list[Path], name: str) -> Path | None:
    for d in lib_dirs:
        plain = d / f"lib{name}.so"
        if plain.exists():
            return plain
        versioned = sorted(d.glob(f"lib{name}.so.[0-9]*"))
        if versioned:
            return versioned[0]
    return None


def _link_dir_for(libraries: dict[str, Path]) -> Path:
    """A folder where `-l<name>` finds every library: theirs if it has the plain names, else one of ours with
    plain-named symlinks to the real (versioned) files."""
    dirs = {path.parent for path in libraries.values()}
    if len(dirs) == 1 and all(path.name == f"lib{name}.so" for name, path in libraries.items()):
        return dirs.pop()
    real = {name: path.resolve() for name, path in libraries.items()}
    digest = hashlib.sha256("|".join(str(real[n]) for n in sorted(real)).encode()).hexdigest()[:16]
    link_dir = default_dest().parent / "cublas-link" / digest
    link_dir.mkdir(parents=True, exist_ok=True)
    for name, target in real.items():
        link = link_dir / f"lib{name}.so"
        if not link.exists():
            tmp = link_dir / f".lib{name}.so.{os.getpid()}"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(target)
            tmp.replace(link)  # atomic: concurrent builds never see a half-made link
    return link_dir


def locate(require_libraries: bool = True) -> CublasToolchain:
    looked = []
    for origin, include_dir, lib_dirs in _candidates():
        if not all((include_dir / h).is_file() for h in HEADERS):
            looked.append(f"{include_dir} (no {' / '.join(HEADERS)})")
            continue
        libraries = {name: _find_library(lib_dirs, name) for name in LIBRARIES}
        if any(p is None for p in libraries.values()):
            if require_libraries:
                looked.append(f"{origin}: headers but no lib{{cublas,cublasLt}}.so* in {[str(d) for d in lib_dirs]}")
                continue
            return CublasToolchain(origin, include_dir, None, None)
        lib_dir = next(iter(libraries.values())).resolve().parent
        return CublasToolchain(origin, include_dir, lib_dir, _link_dir_for(libraries))
    raise CublasNotFound("cuBLAS headers/libraries not found; looked in:\n  " + "\n  ".join(looked) +
                         "\nFetch them with `python -m kernels.cublas.fetch_headers` or set HGEMM_CUBLAS_HOME.")
