"""Session 26: the smallest sequence that makes our cuBLAS GemmEx arm fail a global-mode capture after cuBLASLt
autotuning-style captures (tuner.evaluate's judge). Usage: gemmex_capture_repro.py VARIANT (one per process).
  control      capture gemmex in torch.cuda.graph, nothing before it but one eager call on the default stream
  judge        first time 8 cuBLASLt algorithms the way the judge does (GraphSampler: side-stream warm-up + capture)
  judge_eager  the same algorithms run eagerly on side streams only (no capture)
  judge_bound  judge, then one eager gemmex on torch.cuda.graph's capture stream before capturing
  judge_raw    judge, then capture with cudaStreamBeginCapture/EndCapture on a fresh stream (no torch capture_end)
  cold         the arm's very first call is the captured one (the cuBLAS handle is created inside the capture)"""
import ctypes
import sys

import torch

variant = sys.argv[1]
torch.cuda.set_device(0)
from kernels.cublas import CublasArm, lt_algorithms  # noqa: E402
from kernels.runtime import _workspace  # noqa: E402
from tuner.timing import GraphSampler  # noqa: E402

m, n, k = 256, 512, 8192
a = torch.randn(m, k, device="cuda", dtype=torch.float16)
b = torch.randn(k, n, device="cuda", dtype=torch.float16)
out = torch.empty(m, n, device="cuda", dtype=torch.float16)
gemmex = CublasArm("gemmex")
run = lambda: gemmex(a, b, out, b_layout="row", acc="f32")  # noqa: E731
if variant != "cold":
    run()
    torch.cuda.synchronize()
if variant.startswith("judge"):
    algos = lt_algorithms(m, n, k, b_layout="row", acc="f32", top_n=32)
    for algo in algos:
        arm = CublasArm("lt_algo", algo.index, top_n=32)
        fn = lambda x, y, z, arm=arm: arm(x, y, z, b_layout="row", acc="f32")  # noqa: E731
        if variant == "judge_eager":
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                fn(a, b, out)
            torch.cuda.synchronize()
        else:
            sampler = GraphSampler(fn, [(a, b, out)])
            sampler()
            print("  lt algo", algo.index, sampler.method)
        del fn
    run()  # the eager check that precedes a capture in evaluate_shape
    torch.cuda.synchronize()
if variant == "judge_bound":
    if torch.cuda.graph.default_capture_stream is None:
        torch.cuda.graph.default_capture_stream = torch.cuda.Stream()
    with torch.cuda.stream(torch.cuda.graph.default_capture_stream):
        run()
    torch.cuda.synchronize()
if variant == "judge_raw":
    lib = next(line.split()[-1] for line in open("/proc/self/maps") if "libcudart" in line)
    cudart = ctypes.CDLL(lib)
    s = torch.cuda.Stream()
    _workspace(0, s.cuda_stream, 32 << 20)
    with torch.cuda.stream(s):
        e1 = cudart.cudaStreamBeginCapture(ctypes.c_void_p(s.cuda_stream), 0)
        run()
        g = ctypes.c_void_p()
        e2 = cudart.cudaStreamEndCapture(ctypes.c_void_p(s.cuda_stream), ctypes.byref(g))
    print(variant, "begin", e1, "end", e2, "OK" if e2 == 0 else "FAILED")
else:
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            run()
        graph.replay()
        torch.cuda.synchronize()
        print(variant, "OK")
    except Exception as exc:  # noqa: BLE001
        print(variant, "FAILED", str(exc).splitlines()[0])
