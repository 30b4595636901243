"""Host time per call (what Python spends before the GPU work is queued), for the cached dispatch and its parts.

    python -m kernels.overhead [--shape 64x4096x64] [--calls 3000] [--rotate 64]
    python -m kernels.overhead --stub        # no GPU: the Python side only, against C stubs compiled with cc

Each call is timed alone (perf_counter around it) and the median is reported; the stream is synchronized every 128
calls, outside the timed region, so the launch queue never fills and blocks the host. Target for a cached
`kernels.gemm`: <= 6 us (torch.matmul costs 15-20 us on the H200 host).
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def host_us(fn, calls: int, sync: bool = True) -> float:
    import torch

    synchronize = torch.cuda.synchronize if sync else (lambda: None)
    for _ in range(20):  # warm-up: selection, plans, workspaces, handles
        fn()
    synchronize()
    times = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if i % 128 == 127:
            synchronize()
    synchronize()
    return statistics.median(times) * 1e6


# C stubs with the exported ABI of a built variant and of the cuBLAS wrapper that return at once: timing a call
# against them measures what Python spends (checks, struct packing, the ctypes call), nothing of CUDA.
_VARIANT_STUB = r"""
#include "hgemm_abi.h"
HGEMM_EXPORT const char* hgemm_variant_name(void) { return "NAME"; }
HGEMM_EXPORT int hgemm_run(const hgemm_args_t* p) { return p->A ? 0 : 1; }
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t* p) { (void)p; return 0; }
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t* p) { (void)p; return 0; }
"""
_ARMS_STUB = r"""
#include "arms.h"
int hgemm_arms_abi_version(void) { return HGEMM_ARMS_ABI_VERSION; }
const char* hgemm_arms_status_string(int s) { (void)s; return "stub"; }
int hgemm_gemmex(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                 void* w, size_t wb, void* s) { return A ? 0 : -1; }
static int plan_storage;
int hgemm_lt_plan(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, uint32_t al, size_t wb, int top, int st,
                  void** out) { *out = &plan_storage; return 0; }
int hgemm_lt_algo_count(const void* p) { return 1; }
int hgemm_lt_algo_info(const void* p, int i, hgemm_lt_algo_info_t* info) { return 0; }
int hgemm_lt_run(const void* p, int i, const void* A, const void* B, void* C, void* w, size_t wb, void* s) {
  return A ? 0 : -1;
}
int hgemm_gemmex_call(const hgemm_arms_call_t* c) { return c->A ? 0 : -1; }
int hgemm_lt_call(const hgemm_arms_call_t* c) { return c->plan ? 0 : -1; }
"""


def _compile_stub(source: str, include: Path, out: Path) -> Path:
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I", str(include), "-o", str(out), str(src)], check=True)
    return out


def best_batch_us(fn, calls: int, batch: int = 100) -> float:
    """Mean time per call of the fastest batch: on a shared CPU the other tenants only ever add time."""
    for _ in range(20):
        fn()
    best = float("inf")
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / batch * 1e6


def stub_main(m: int, n: int, k: int, b_layout: str, acc: str, calls: int) -> int:
    """Python-side host time per call on a machine without a GPU: CPU tensors pose as cuda:0 (Tensor.get_device is
    patched for the run), the stream getter is a constant, the C side is a stub that returns at once. Real calls add
    the C side (the launch) and ~0.1 us for torch's stream getter. The dispatchers' fast path reads the operands
    through Python attributes here (the pose is Python's); the last two rows time a bare table on CPU tensors both
    ways, through those attributes and through tensor_reader.cpp (the at::Tensor), which real calls use."""
    import torch

    import kernels.cublas as cublas
    from kernels import fastpath, runtime, space
    from kernels.codegen.generate import CODEGEN_DIR
    from kernels.cublas import CublasArm, library
    from kernels.dispatch import Dispatcher

    cfg = next(c for c in space.variant_set("default") if c.b_layout == b_layout and c.acc == acc)
    a = torch.randn(m, k).half()
    b = torch.randn(*((k, n) if b_layout == "row" else (n, k))).half()
    out = torch.empty(m, n, dtype=torch.float16)
    workspace = torch.empty(1 << 20, dtype=torch.uint8)
    saved = (torch.Tensor.get_device, runtime._workspace, cublas._runtime_hooks, library._library)
    with tempfile.TemporaryDirectory() as tmp:
        variant_so = _compile_stub(_VARIANT_STUB.replace("NAME", cfg.name), CODEGEN_DIR, Path(tmp) / "variant.so")
        arms_so = _compile_stub(_ARMS_STUB, library.ARMS_DIR, Path(tmp) / "arms.so")
        try:
            torch.Tensor.get_device = lambda self: 0
            runtime._workspace = lambda device, stream, nbytes: workspace
            cublas._runtime_hooks = (lambda device: 0x5000, runtime._workspace)
            library._library = library.bind(arms_so)
            kernel = runtime.CompiledKernel(cfg, variant_so)
            kernel._stream = lambda device: 0x5000
            gemmex, lt = CublasArm("gemmex"), CublasArm("lt_heuristic")
            stream_of = lambda device: 0x5000  # noqa: E731
            d = Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda c: kernel, fast_path=False)
            d_variant = Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda c: kernel,
                                   predictor=lambda *shape: cfg, supports=lambda *args: True, fast_path=False)
            fast = Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda c: kernel,
                              fast_path=fastpath.new_table(stream_of, tensor_reader=False))
            fast_variant = Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda c: kernel,
                                      predictor=lambda *shape: cfg, supports=lambda *args: True,
                                      fast_path=fastpath.new_table(stream_of, tensor_reader=False))
            bare, stub_run = {}, ctypes.cast(kernel._lib.hgemm_run, ctypes.c_void_p).value
            for reader in (False, True):  # one entry, for the device each way reads: the pose's 0, the tensors' -1
                table = bare[reader] = fastpath.new_table(stream_of, allow_cpu=True, tensor_reader=reader)
                table.put(m, n, k, b_layout, acc, -1 if reader else 0, 0x5000, False, stub_run, bytes(128), 16, False,
                          None, None)
            rows = [
                ("Dispatcher.gemm, C fast path -> cuBLAS fallback", lambda: fast.gemm(a, b, b_layout, acc, out)),
                ("Dispatcher.gemm, C fast path -> built variant", lambda: fast_variant.gemm(a, b, b_layout, acc, out)),
                ("Dispatcher.gemm, C fast path -> variant, allocating out",
                 lambda: fast_variant.gemm(a, b, b_layout, acc)),
                ("Dispatcher.gemm -> cuBLAS fallback (Python path)", lambda: d.gemm(a, b, b_layout, acc, out)),
                ("Dispatcher.gemm -> built variant (Python path)", lambda: d_variant.gemm(a, b, b_layout, acc, out)),
                ("CompiledKernel(a, b, out)", lambda: kernel(a, b, out)),
                ("CublasArm('gemmex')(..., b_layout, acc)", lambda: gemmex(a, b, out, b_layout=b_layout, acc=acc)),
                ("CublasArm('gemmex').launcher(...) run", lambda run=gemmex.launcher(b_layout, acc): run(a, b, out)),
                ("CublasArm('lt_heuristic').launcher(...) run", lambda run=lt.launcher(b_layout, acc): run(a, b, out)),
                ("FastTable.gemm alone, operands read through Python attributes",
                 lambda: bare[False].gemm(a, b, out, b_layout, acc)),
                ("FastTable.gemm alone, operands read by tensor_reader.cpp",
                 lambda: bare[True].gemm(a, b, out, b_layout, acc)),
                ("FastTable.gemm alone, allocating out, through Python (attributes, new_empty)",
                 lambda: bare[False].gemm(a, b, None, b_layout, acc)),
                ("FastTable.gemm alone, allocating out, tensor_reader.cpp (at::empty)",
                 lambda: bare[True].gemm(a, b, None, b_layout, acc)),
            ]
            print(f"Python side only (C stubs, CPU tensors)  {m}x{n}x{k} b_layout={b_layout} acc={acc}  "
                  f"best batch mean, {calls} calls in batches of 100")
            for label, fn in rows:
                print(f"  {best_batch_us(fn, calls):7.2f} us  {label}")
            print(f"  fast path: {fast_variant.fast_path_stats()} (variant), {fast.fast_path_stats()} (cuBLAS); "
                  f"bare tables: {bare[False].stats()}, {bare[True].stats()} (tensor reader: "
                  f"{bare[True].tensor_reader or fastpath.reader_unavailable_reason() or 'off'})")
        finally:
            torch.Tensor.get_device, runtime._workspace, cublas._runtime_hooks, library._library = saved
    return 0


def variant_rows(m: int, n: int, k: int, b_layout: str, acc: str, variant_set: str = "default") -> list:
    """For one built variant per family (sm90, sm80, splitk, and splitk's cluster schedule: a cluster launch) of
    `variant_set` (comma-separated sets) that runs this shape: the dispatcher with the C fast path (operands read by
    the tensor reader where it builds, and through Python attributes), the dispatcher's Python path, and the bare
    ctypes launcher (what a CUTLASS launch costs without cuBLAS's host side). Rows are (label, fn(a, b, out))."""
    from kernels import fastpath, runtime, space
    from kernels.dispatch import Dispatcher

    rows = []
    for family, schedule in (("sm90", None), ("sm80", None), ("splitk", ""), ("splitk", "cluster")):
        for cfg in space.variant_sets(variant_set):
            if (cfg.family != family or schedule not in (None, cfg.schedule) or cfg.b_layout != b_layout
                    or cfg.acc != acc or not space.supports(cfg, m, n, k)):
                continue
            try:
                kernel = runtime.load(cfg, build_if_missing=False)
            except runtime.KernelNotBuilt:
                continue
            fast = Dispatcher.default(tables={}, predictor=lambda *shape, cfg=cfg: cfg)
            attrs = Dispatcher.default(tables={}, predictor=lambda *shape, cfg=cfg: cfg,
                                       fast_path=fastpath.new_table(tensor_reader=False) or False)
            slow = Dispatcher.default(tables={}, predictor=lambda *shape, cfg=cfg: cfg, fast_path=False)
            name = cfg.name if len(cfg.name) < 40 else cfg.name[:37] + "..."
            def through(d):
                return lambda a, b, out: d.gemm(a, b, b_layout, acc, out)

            reader = "tensor reader" if fastpath.tensor_reader_address() else "no tensor reader"
            rows += [(f"Dispatcher.gemm, C fast path ({reader}) -> {name}", through(fast)),
                     (f"Dispatcher.gemm, C fast path (attributes) -> {name}", through(attrs)),
                     (f"Dispatcher.gemm, Python path -> {name}", through(slow)),
                     (f"CompiledKernel launcher (ctypes) {name}", kernel.launcher())]
            break
    return rows


class RotatingOperands:
    """`copies` sets of (a, b, out) handed out in turn: every call moves the operands, as in the per-call benchmark
    (tuner/timing.py) or for a caller with fresh tensors."""

    def __init__(self, m: int, n: int, k: int, b_layout: str, copies: int):
        import torch

        self.sets = [(torch.randn(m, k, device="cuda").half(),
                      torch.randn(*((k, n) if b_layout == "row" else (n, k)), device="cuda").half(),
                      torch.empty(m, n, device="cuda", dtype=torch.float16)) for _ in range(copies)]
        self.i = 0

    def next(self) -> tuple:
        self.i = (self.i + 1) % len(self.sets)
        return self.sets[self.i]


def main(argv=None) -> int:
    import torch

    import kernels
    import kernels.torch_op  # noqa: F401  registers torch.ops.hgemm.gemm
    from kernels.cublas import CublasArm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="64x4096x64", help="MxNxK")
    parser.add_argument("--b-layout", default="col", choices=("row", "col"))
    parser.add_argument("--acc", default="f32", choices=("f32", "f16"))
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--stub", action="store_true", help="no GPU: time the Python side against C stubs")
    parser.add_argument("--set", default="default",
                        help="variant set(s), comma separated, to take the built sm90 / sm80 / splitk (L2, cluster) "
                             "rows from")
    parser.add_argument("--rotate", type=int, default=1, metavar="N",
                        help="each call on the next of N operand sets (as in the per-call benchmark, or a caller with "
                             "fresh tensors: the variants' launch caches retarget their prepared launches, or with "
                             "HGEMM_RETARGET=0 prepare them again); 1: the same operands every call")
    args = parser.parse_args(argv)
    m, n, k = (int(x) for x in args.shape.split("x"))
    if args.rotate < 1:
        parser.error("--rotate must be >= 1")
    if args.stub:
        return stub_main(m, n, k, args.b_layout, args.acc, args.calls)
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU (or --stub)")
    operands = RotatingOperands(m, n, k, args.b_layout, args.rotate)
    gemmex_arm, lt_arm = CublasArm("gemmex"), CublasArm("lt_heuristic")
    sel = kernels.get_dispatcher().select(m, n, k, args.b_layout, args.acc)
    rows = variant_rows(m, n, k, args.b_layout, args.acc, args.set) + [
        (f"kernels.gemm (cached; runs {sel.kernel}, fallback={sel.fallback})",
         lambda a, b, out: kernels.gemm(a, b, b_layout=args.b_layout, acc=args.acc, out=out)),
        ("kernels.gemm, allocating out", lambda a, b, out: kernels.gemm(a, b, b_layout=args.b_layout, acc=args.acc)),
        ("torch.ops.hgemm.gemm (kernels.torch_op), allocating out",
         lambda a, b, out: torch.ops.hgemm.gemm(a, b, args.b_layout, args.acc)),
        ("kernels.torch_op.gemm, plain eager (no operator layer), allocating out",
         lambda a, b, out: kernels.torch_op.gemm(a, b, b_layout=args.b_layout, acc=args.acc)),
        ("selection.run (prepared launcher only)", lambda a, b, out: sel.run(a, b, out)),
        ("CublasArm('gemmex') direct", lambda a, b, out: gemmex_arm(a, b, out, b_layout=args.b_layout, acc=args.acc)),
        ("CublasArm('lt_heuristic') direct",
         lambda a, b, out: lt_arm(a, b, out, b_layout=args.b_layout, acc=args.acc)),
        ("CublasArm('lt_heuristic').launcher run",
         lambda a, b, out, run=lt_arm.launcher(args.b_layout, args.acc): run(a, b, out)),
        ("torch.matmul(a, b, out=out)",
         lambda a, b, out: torch.matmul(a, b if args.b_layout == "row" else b.t(), out=out)),
    ]
    print(f"{torch.cuda.get_device_name()}  {m}x{n}x{k} b_layout={args.b_layout} acc={args.acc}  "
          f"median host time per call over {args.calls} calls, operands rotated over {args.rotate} set(s)")
    for label, fn in rows:
        print(f"  {host_us(lambda fn=fn: fn(*operands.next()), args.calls):7.2f} us  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
