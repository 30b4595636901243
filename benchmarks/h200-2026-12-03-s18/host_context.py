"""Session 18 experiment: does our call's host part grow with what runs between calls, and torch.matmul's too?
The same call (the dispatcher's cached path, torch.matmul) timed host-only (perf_counter around the call) in five
contexts: back to back (sync every 128 calls), synchronized before each call, synchronized and the operands rotated
over 40 copies, the other competitor's call (plus sync) in between, and ~8 MB of host memory touched in between.

    python benchmarks/h200-2026-12-03-s18/host_context.py [M_N_K ...]"""
import statistics
import sys
import time

import torch

import kernels


def medians(fn, argsets, between, calls=2000):
    times = []
    for i in range(calls + 200):
        between()
        a, b, out = argsets[i % len(argsets)]
        t0 = time.perf_counter()
        fn(a, b, out)
        t1 = time.perf_counter()
        if i >= 200:
            times.append((t1 - t0) * 1e6)
        if i % 128 == 127:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(times)


def main(shapes):
    sync = torch.cuda.synchronize
    junk, source = bytearray(8 << 20), bytes(range(256)) * (32 << 10)
    for mnk in shapes:
        m, n, k = map(int, mnk.split("_"))
        sets = [(torch.randn(m, k, device="cuda").half(), torch.randn(n, k, device="cuda").half(),
                 torch.empty(m, n, device="cuda", dtype=torch.half)) for _ in range(40)]
        ours = lambda a, b, out: kernels.gemm(a, b, b_layout="col", acc="f32", out=out)  # noqa: E731
        mm = lambda a, b, out: torch.matmul(a, b.t(), out=out)  # noqa: E731
        for a, b, out in sets[:2]:  # correct before timed
            ref = a.double() @ b.double().t()
            for fn in (ours, mm):
                out.fill_(float("nan"))
                fn(a, b, out)
                err = float((out.double() - ref).norm() / ref.norm())
                assert err < 2e-3, err
        sel = kernels.get_dispatcher().select(m, n, k, "col", "f32")
        print(f"{mnk}: ours runs {sel.kernel} (fallback {sel.fallback}); host part, median µs")
        print(f"  {'context':<44} {'ours':>8} {'torch.matmul':>13}")

        def touch():
            junk[:] = source  # 8 MB written: the CPU caches hold little of the call's path after
        contexts = [
            ("back to back (sync every 128)", lambda: None, 1),
            ("sync before each", sync, 1),
            ("sync before each, 40 operand copies", sync, 40),
            ("the other's call + sync in between", None, 40),
            ("8 MB host memory touched + sync", lambda: (touch(), sync()), 40),
        ]
        for label, between, copies in contexts:
            row = []
            for fn, other in ((ours, mm), (mm, ours)):
                argsets = sets[:copies]
                if between is None:
                    def between_fn(other=other):
                        a, b, out = sets[7]
                        other(a, b, out)
                        sync()
                else:
                    between_fn = between
                row.append(medians(fn, argsets, between_fn))
            print(f"  {label:<44} {row[0]:>8.2f} {row[1]:>13.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["512_512_1024", "128_256_256"])
