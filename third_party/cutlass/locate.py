"""Find the CUTLASS headers: $CUTLASS_DIR if set, else the installed nvidia-cutlass wheel (cutlass_library/source).

Standalone on purpose (no imports from the repo) so kernels/build.py can load it by path."""
from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

PIN = "nvidia-cutlass==4.2.0.0"


class CutlassNotFound(RuntimeError):
    pass


def source_root() -> Path:
    """The directory holding include/ and tools/util/include/."""
    env = os.environ.get("CUTLASS_DIR")
    if env:
        root = Path(env).expanduser().resolve()
        if (root / "include" / "cutlass" / "cutlass.h").is_file():
            return root
        raise CutlassNotFound(f"CUTLASS_DIR={env} has no include/cutlass/cutlass.h")
    spec = importlib.util.find_spec("cutlass_library")  # find_spec does not import the (heavy) package
    if spec is None or not spec.submodule_search_locations:
        raise CutlassNotFound(f"CUTLASS headers not found: pip install {PIN} or set CUTLASS_DIR")
    root = Path(next(iter(spec.submodule_search_locations))) / "source"
    if not (root / "include" / "cutlass" / "cutlass.h").is_file():
        raise CutlassNotFound(f"{root} has no include/cutlass/cutlass.h (is {PIN} installed?)")
    return root


def include_dirs() -> list[Path]:
    root = source_root()
    return [root / "include", root / "tools" / "util" / "include"]


def version() -> str:
    """CUTLASS version from include/cutlass/version.h, e.g. '4.2.0'."""
    text = (source_root() / "include" / "cutlass" / "version.h").read_text()
    parts = [re.search(rf"#define CUTLASS_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) if m else "?" for m in parts)


if __name__ == "__main__":
    for d in include_dirs():
        print(d)
    print("version", version())
