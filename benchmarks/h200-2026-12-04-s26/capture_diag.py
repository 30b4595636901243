"""Session 26 diagnosis: why `ours` fails CUDA-graph capture (cudaErrorStreamCaptureInvalidated) beside the cuBLASLt
autotuning baseline. Runs tuner.evaluate.evaluate_shape on the first NSHAPES shapes of the shuffled grid with every
GraphSampler and replayed() check instrumented: the capture stream's status after each launch (the first launch that
left it invalidated), cudaPeekAtLastError before the capture, the per-(device, stream) workspace before/after, and
whether an immediate second capture succeeds. Usage: capture_diag.py ACC LAYOUT BASELINES MODE NSHAPES OUT.json
(ACC f32|f16; BASELINES comma-separated; MODE: torch.cuda.graph's capture_error_mode). Switches (env, 0/1):
DIAG_HISTORY torch's memory history of segment frees in a failed capture; DIAG_WRAP_RELAXED every `ours` call inside
a capture made with the thread's capture mode relaxed; DIAG_PROFILE the Python calls of ours' first captured launch."""
import ctypes
import json
import random
import sys
import traceback

import torch

acc, layout, baseline, mode, nshapes, out_path = sys.argv[1:7]
torch.cuda.set_device(0)
torch.set_grad_enabled(False)
torch.empty(1, device="cuda")
lib = next(line.split()[-1] for line in open("/proc/self/maps") if "libcudart" in line)
cudart = ctypes.CDLL(lib)


def status(stream: int) -> int:
    s = ctypes.c_int(-1)
    e = cudart.cudaStreamIsCapturing(ctypes.c_void_p(stream), ctypes.byref(s))
    return s.value if e == 0 else 100 + e


WRAP = bool(int(__import__("os").environ.get("DIAG_WRAP_RELAXED", "0")))
PROFILE = bool(int(__import__("os").environ.get("DIAG_PROFILE", "0")))
HISTORY = bool(int(__import__("os").environ.get("DIAG_HISTORY", "0")))
if HISTORY:
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")


def trace():
    return torch.cuda.memory._snapshot()["device_traces"][0]


from kernels import runtime  # noqa: E402
from tuner import evaluate, timing  # noqa: E402
from tuner.correctness import NotCapturable  # noqa: E402
from tuner.shapes import Shape  # noqa: E402

LOG: list[dict] = []
STATE = {"shape": None, "phase": "build"}


def ws_bytes(stream: int):
    t = runtime._workspaces.get((0, stream))
    return None if t is None else t.numel()


def instrumented_capture(fn, argsets, launches, label):
    rec = {"shape": STATE["shape"], "phase": STATE["phase"], "label": label, "launches": launches,
           "peek_before": cudart.cudaPeekAtLastError()}
    graph = torch.cuda.CUDAGraph()
    frees0 = torch.cuda.memory_stats().get("num_device_free", -1)
    trace0 = len(trace()) if HISTORY else 0
    try:
        with torch.cuda.graph(graph, capture_error_mode=mode):
            cs = torch.cuda.current_stream().cuda_stream
            rec.update(stream=cs, status_begin=status(cs), ws_before=ws_bytes(cs))
            for i in range(launches):
                if WRAP and label.startswith(("ours", "check:ours")):
                    m = ctypes.c_int(2)
                    cudart.cudaThreadExchangeStreamCaptureMode(ctypes.byref(m))
                    fn(*argsets[i % len(argsets)])
                    cudart.cudaThreadExchangeStreamCaptureMode(ctypes.byref(m))
                elif PROFILE and i == 0 and label.startswith("check:ours"):
                    calls = rec["calls"] = []

                    def prof(frame, event, arg):
                        if event == "call":
                            calls.append(f"{frame.f_code.co_filename.split('/')[-1]}:{frame.f_code.co_name}")
                        elif event == "c_call":
                            calls.append(f"  C {getattr(arg, '__qualname__', repr(arg))[:60]}")
                    sys.setprofile(prof)
                    try:
                        fn(*argsets[i % len(argsets)])
                    finally:
                        sys.setprofile(None)
                else:
                    fn(*argsets[i % len(argsets)])
                if "first_bad" not in rec and status(cs) != 1:
                    rec.update(first_bad=i, status_bad=status(cs), peek_bad=cudart.cudaPeekAtLastError(),
                               ws_bad=ws_bytes(cs))
            rec["ws_after"] = ws_bytes(cs)
        rec["ok"] = True
        return graph, rec
    except Exception as exc:  # noqa: BLE001
        rec["device_frees"] = torch.cuda.memory_stats().get("num_device_free", -1) - frees0
        if HISTORY:
            rec["trace"] = [{"action": t["action"], "size": t.get("size"), "frames": [
                f"{f['filename'].split('/')[-1]}:{f['line']} {f['name']}" for f in t.get("frames", [])[:14]]}
                for t in trace()[trace0:] if t["action"] not in ("alloc", "free_requested", "free_completed")][:6]
        rec["context"] = repr(exc.__context__)[:400]
        rec.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:160],
                   where=[f"{f.filename.split('/')[-1]}:{f.lineno} {f.name}" for f in traceback.extract_tb(exc.__traceback__)[-4:]])
        torch.cuda.synchronize()
        rec["cleared"] = cudart.cudaGetLastError()
        g2 = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g2, capture_error_mode=mode):
                for i in range(launches):
                    fn(*argsets[i % len(argsets)])
            rec["retry_ok"] = True
        except Exception as exc2:  # noqa: BLE001
            rec["retry_ok"] = False
            rec["retry_error"] = f"{type(exc2).__name__}: {exc2}"[:160]
            torch.cuda.synchronize()
        return None, rec
    finally:
        LOG.append(rec)


class DiagSampler(timing.GraphSampler):
    def __init__(self, fn, argsets, launches=None):
        self.torch = torch
        self.fn, self.argsets = fn, argsets
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for i in range(3):
                fn(*argsets[i % len(argsets)])
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        self.launches = launches or timing.launches_for(len(argsets), self._eager_us(min(len(argsets), 8)))
        self.graph, rec = instrumented_capture(fn, argsets, self.launches, getattr(fn, "__qualname__", "?"))
        self.method = "graph" if self.graph is not None else "events"
        self.capture_error = rec.get("error")
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)


def diag_replayed(fn):
    def run(a, b, out):
        graph, rec = instrumented_capture(fn, [(a, b, out)], 1, "check:" + getattr(fn, "__qualname__", "?"))
        if graph is None:
            raise NotCapturable(rec["error"])
        graph.replay()
        return out
    return run


evaluate.GraphSampler = DiagSampler
evaluate.replayed = diag_replayed
orig_checked_phase = evaluate.comp.baselines


def baselines(*a, **k):
    STATE["phase"] = "judge"
    try:
        return orig_checked_phase(*a, **k)
    finally:
        STATE["phase"] = "checks+samplers"


evaluate.comp.baselines = baselines
from kernels.dispatch import Dispatcher  # noqa: E402

d = Dispatcher.default()
shapes = open("tuner/grids/grid_1000.txt").read().split()
random.Random(0).shuffle(shapes)
per_shape = []
for mnk in shapes[:int(nshapes)]:
    STATE["shape"], STATE["phase"] = mnk, "build-ours"
    rec = evaluate.evaluate_shape(Shape(*map(int, mnk.split("_"))), acc, warmup_seconds=0.05, benchmark_seconds=0.1,
                                  timings=("kernel",), b_layout=layout, baseline_names=tuple(baseline.split(",")),
                                  dispatcher=d)
    per_shape.append({"mnk": mnk, **{n: [c["info"].get("kernel_method"), c["info"].get("kernel"), c["info"].get("algo_index")]
                                      for n, c in rec["competitors"].items()}})
json.dump({"captures": LOG, "methods": per_shape}, open(out_path, "w"), indent=0)
bad = [r for r in LOG if not r["ok"]]
PRINTED = []
good = [r for r in LOG if r["ok"] and r.get("calls")]
if good:
    print("a capture that worked,", good[-1]["shape"], "calls:", " | ".join(good[-1]["calls"]))
print(f"{mode}: {len(LOG)} captures, {len(bad)} failed, retry ok {sum(bool(r.get('retry_ok')) for r in bad)}")
for r in bad[:30]:
    print(" ", r["shape"], r["phase"], r["label"], "first_bad", r.get("first_bad"), "/", r["launches"], "peek_before",
          r["peek_before"], "ws", r.get("ws_before"), r.get("ws_bad"), r.get("ws_after"), "retry", r.get("retry_ok"),
          "frees", r.get("device_frees"), "|", r["error"][:90], r["where"][-2:])
    print("     context:", r.get("context"))
    if r.get("calls") and not PRINTED:
        PRINTED.append(1)
        print("     calls:", " | ".join(r["calls"]))
    for t in r.get("trace", []):
        print("     ", t["action"], t["size"], " <- ".join(t["frames"]))
