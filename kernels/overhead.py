"""Host time per call (what Python spends before the GPU work is queued), for the cached dispatch and its parts.

    python -m kernels.overhead [--shape 64x4096x64] [--calls 3000]

Each call is timed alone (perf_counter around it) and the median is reported; the stream is synchronized every 128
calls, outside the timed region, so the launch queue never fills and blocks the host. Target for a cached
`kernels.gemm`: <= 6 us (torch.matmul costs 15-20 us on the H200 host).
"""
from __future__ import annotations

import argparse
import statistics
import time


def host_us(fn, calls: int) -> float:
    import torch

    for _ in range(20):  # warm-up: selection, plans, workspaces, handles
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if i % 128 == 127:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(times) * 1e6


def main(argv=None) -> int:
    import torch

    import kernels
    from kernels.cublas import CublasArm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="64x4096x64", help="MxNxK")
    parser.add_argument("--b-layout", default="col", choices=("row", "col"))
    parser.add_argument("--acc", default="f32", choices=("f32", "f16"))
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    m, n, k = (int(x) for x in args.shape.split("x"))
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(*((k, n) if args.b_layout == "row" else (n, k)), device="cuda").half()
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)
    bt = b if args.b_layout == "row" else b.t()
    gemmex_arm, lt_arm = CublasArm("gemmex"), CublasArm("lt_heuristic")
    sel = kernels.get_dispatcher().select(m, n, k, args.b_layout, args.acc)
    rows = [
        (f"kernels.gemm (cached; runs {sel.kernel}, fallback={sel.fallback})",
         lambda: kernels.gemm(a, b, b_layout=args.b_layout, acc=args.acc, out=out)),
        ("kernels.gemm, allocating out", lambda: kernels.gemm(a, b, b_layout=args.b_layout, acc=args.acc)),
        ("selection.run (prepared launcher only)", lambda: sel.run(a, b, out)),
        ("CublasArm('gemmex') direct", lambda: gemmex_arm(a, b, out, b_layout=args.b_layout, acc=args.acc)),
        ("CublasArm('lt_heuristic') direct", lambda: lt_arm(a, b, out, b_layout=args.b_layout, acc=args.acc)),
        ("torch.matmul(a, b, out=out)", lambda: torch.matmul(a, bt, out=out)),
    ]
    print(f"{torch.cuda.get_device_name()}  {m}x{n}x{k} b_layout={args.b_layout} acc={args.acc}  "
          f"median host time per call over {args.calls} calls")
    for label, fn in rows:
        print(f"  {host_us(fn, args.calls):7.2f} us  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
