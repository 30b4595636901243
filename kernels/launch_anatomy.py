"""Where a cached call's host time goes below Python: kernels/launch_anatomy.cu times, in C, the pieces of a launch
(cudaGetDevice, cudaGetLastError, three cuTensorMapReplaceAddress, launches of empty kernels plain and in the sm90
variants' form: cudaLaunchKernelExC with 1 KB params, a cluster, PDL; the driver's cuLaunchKernelEx) and then built
variants' hgemm_run on a cache hit, retargeted to alternating operands, and as the per-call benchmark samples it
(sync, call, sync: host part and wait).

    python -m kernels.launch_anatomy --variants NAME[,NAME] [--shape 512x512x1024] [--calls 5000] [--torch] [--out F]

Why: through the fast path our host part is ~8-9 µs a call; this says how much of it is the driver's launch, how much
hgemm_run adds around it, and what a cold call (caches flushed) costs in C alone (tuner.call_anatomy splits the
Python-level call; kernels.overhead times the Python paths). Session 18: hgemm_run = the launch + ~0.5-1 µs."""
from __future__ import annotations

import argparse
import ctypes
import json
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("launch_anatomy.cu")
GENCODE = ("-gencode", "arch=compute_90a,code=sm_90a")  # cluster launches need sm_90


def parse_shape(text: str) -> tuple[int, int, int]:
    parts = text.lower().replace("_", "x").split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--shape wants MxNxK with positive integers, got {text!r}")
    return tuple(int(p) for p in parts)


def compile_probe() -> Path:
    from kernels.build import compile_tu

    return compile_tu(SOURCE.read_text(), "launch_anatomy", gencode=list(GENCODE))


def variant_paths(names: list[str]) -> list[tuple[str, Path, bool]]:
    """(name, built .so, B col-major) per variant name; a variant not built here raises."""
    from kernels import space
    from kernels.build import find_built

    out = []
    for name in names:
        cfg = space.config_named(name)
        path = find_built(cfg)
        if path is None:
            raise SystemExit(f"{name}: not built here (python -m kernels.build, or unpack a pack)")
        out.append((name, path, cfg.b_layout == "col"))
    return out


def run(shape: tuple[int, int, int], variants: list[tuple[str, Path, bool]], calls: int) -> list[dict]:
    lib = ctypes.CDLL(str(compile_probe()))
    lib.launch_anatomy.restype = ctypes.c_int
    lib.launch_anatomy.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    paths = (ctypes.c_char_p * max(1, len(variants)))(*[str(p).encode() for _, p, _ in variants])
    b_col = (ctypes.c_int * max(1, len(variants)))(*[int(col) for _, _, col in variants])
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pieces.jsonl"
        status = lib.launch_anatomy(str(out).encode(), calls, *shape, paths, b_col, len(variants))
        if status != 0:
            raise SystemExit(f"launch_anatomy returned {status}")
        return parse_lines(out.read_text())


def parse_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def table(rows: list[dict]) -> str:
    lines = [f"{'piece':<48} {'variant':<52} {'median':>8} {'p10':>8} {'p90':>8}  (µs)"]
    for r in rows:
        if "median_us" in r:
            lines.append(f"{r['piece']:<48} {r['variant']:<52} {r['median_us']:>8.2f} {r['p10_us']:>8.2f} "
                         f"{r['p90_us']:>8.2f}")
        else:
            counts = ", ".join(f"{k} {v}" for k, v in r.items() if k not in ("piece", "variant"))
            lines.append(f"{r['piece']:<48} {r['variant']:<52} {counts}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default="", help="comma-separated built variants (none: the floors only)")
    p.add_argument("--shape", default="512x512x1024", help="MxNxK the variants run")
    p.add_argument("--calls", type=int, default=5000, help="timed calls per piece (>= 100)")
    p.add_argument("--out", type=Path, help="write the measurements as JSON")
    p.add_argument("--torch", action="store_true",
                   help="first import torch and run a torch.matmul on the GPU (the process the service and the "
                        "benchmarks run in: torch's CUDA runtime loaded, the context made by torch)")
    args = p.parse_args(argv)
    if args.calls < 100:
        p.error("--calls must be >= 100")
    try:
        shape = parse_shape(args.shape)
    except ValueError as exc:
        p.error(str(exc))
    if args.torch:
        import torch

        x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
        float((x @ x).float().norm())  # a real GEMM: the context made, cuBLAS loaded
    rows = run(shape, variant_paths([v for v in args.variants.split(",") if v]), args.calls)
    print(table(rows))
    if args.out:
        args.out.write_text(json.dumps({"shape": list(shape), "calls": args.calls, "pieces": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
