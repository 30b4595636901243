"""Kernel-only timing of built variants against torch.matmul (cuBLAS) in the same process.

Each measurement captures a CUDA graph of `reps` launches that rotate over enough input sets to exceed the L2 cache,
replays it several times and reports the median time per launch. Also measures host time per eager call.

    python -m kernels.bench --set smoke [--shapes 4096x4096x4096,64x4096x64] [--knobs] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from kernels import build, runtime, space

L2_BYTES = 60 * 1024 * 1024  # H200: 60 MB (measured via torch device properties on the H200 host)


def _time_graph(torch, launch, sets, reps=20, replays=7) -> float:
    """Median microseconds per launch: graph of `reps` launches cycling over `sets`."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for s in sets[:2]:
            launch(*s)  # warm-up: module load, workspace
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(reps):
            launch(*sets[i % len(sets)])
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / reps)
    return statistics.median(times)


def _input_sets(torch, m, n, k, b_layout):
    per_set = 2 * (m * k + k * n + m * n)
    count = max(2, min(64, -(-3 * L2_BYTES // per_set)))
    sets = []
    for _ in range(count):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(*((n, k) if b_layout == "col" else (k, n)), device="cuda", dtype=torch.float16)
        sets.append((a, b, torch.empty(m, n, device="cuda", dtype=torch.float16)))
    return sets


def _torch_launch(torch, b_layout):
    if b_layout == "col":
        return lambda a, b, out: torch.matmul(a, b.t(), out=out)
    return lambda a, b, out: torch.matmul(a, b, out=out)


def host_us_per_call(torch, launch, args, calls=2000) -> float:
    for _ in range(50):
        launch(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        launch(*args)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def parse_shape(text: str) -> tuple[int, int, int]:
    m, n, k = (int(v) for v in text.lower().split("x"))
    return m, n, k


def main(argv=None) -> int:
    import torch

    parser = argparse.ArgumentParser(prog="python -m kernels.bench")
    parser.add_argument("--set", default="smoke")
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,64x4096x64,128x4096x4096")
    parser.add_argument("--knobs", action="store_true", help="also sweep the runtime knobs of the 3 fastest variants")
    parser.add_argument("--json", help="write all measurements here")
    args = parser.parse_args(argv)

    kernels = []
    for cfg in space.variant_set(args.set):
        if build.find_built(cfg) is not None:
            kernels.append(runtime.load(cfg, build_if_missing=False))
    print(f"{torch.cuda.get_device_name()}: {len(kernels)} built variants of set {args.set}", flush=True)
    rows, results = [], []
    for shape in [parse_shape(s) for s in args.shapes.split(",")]:
        m, n, k = shape
        flop = 2.0 * m * n * k
        for b_layout in ("col", "row"):
            sets = _input_sets(torch, m, n, k, b_layout)
            cublas_us = _time_graph(torch, _torch_launch(torch, b_layout), sets)
            best = ("-", float("inf"), {})
            plain = {}
            for kern in kernels:
                if kern.cfg.b_layout == b_layout and space.supports(kern.cfg, m, n, k):
                    plain[kern.name] = _time_graph(torch, kern, sets)
            f32 = [name for name in plain if "_f32_" in name]
            top = sorted(f32, key=plain.get)[:3] if args.knobs else []
            for kern in kernels:
                cfg = kern.cfg
                if kern.name not in plain:
                    continue
                knob_list = [{}]
                if kern.name in top:  # sweep the runtime knobs of the three fastest variants only
                    knobs = space.runtime_knobs(cfg)
                    knob_list += [dict(raster=r, swizzle=s) for r in knobs["raster"] for s in knobs["swizzle"]
                                  if (r, s) != (0, 0)]
                    knob_list += [dict(splits=s) for s in knobs["splits"] if s > 1]
                for kn in knob_list:
                    if not kn:
                        us = plain[kern.name]
                        results.append(dict(m=m, n=n, k=k, b_layout=b_layout, kernel=cfg.name, acc=cfg.acc,
                                            runtime=kn, us=us, cublas_us=cublas_us))
                        if cfg.acc == "f32" and us < best[1]:
                            best = (cfg.name, us, kn)
                        continue
                    try:
                        us = _time_graph(torch, lambda a, b, out, kern=kern, kn=kn: kern(a, b, out, **kn), sets)
                    except runtime.KernelError as exc:
                        print(f"  {cfg.name} {kn}: {exc}")
                        continue
                    results.append(dict(m=m, n=n, k=k, b_layout=b_layout, kernel=cfg.name, acc=cfg.acc,
                                        runtime=kn, us=us, cublas_us=cublas_us))
                    if cfg.acc == "f32" and us < best[1]:
                        best = (cfg.name, us, kn)
            del sets
            torch.cuda.empty_cache()
            rows.append((f"{m}x{n}x{k}", flop, b_layout, cublas_us, best))
            print(f"  {m}x{n}x{k} {b_layout}: torch {cublas_us:.2f} us, best f32 {best[0]} {best[1]:.2f} us",
                  flush=True)

    host = []
    small = [kern for kern in kernels if space.supports(kern.cfg, 64, 4096, 64) and kern.cfg.acc == "f32"]
    picks = [next((kn for kn in small if kn.cfg.family == fam), None) for fam in ("sm80", "sm90")]
    for kern in [p for p in picks if p is not None]:
        a, b, out = _input_sets(torch, 64, 4096, 64, kern.cfg.b_layout)[0]
        full = host_us_per_call(torch, kern, (a, b, out))
        addr = kern._local.addr  # the struct the last call filled: time the C side (CUTLASS setup + launch) alone
        c_only = host_us_per_call(torch, lambda: kern._run(addr), ())
        torch_us = host_us_per_call(torch, _torch_launch(torch, kern.cfg.b_layout), (a, b, out))
        host.append(dict(kernel=kern.name, call_us=full, c_side_us=c_only, torch_matmul_us=torch_us))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results,
                       "host": host}, f, indent=1)

    print("\nkernel-only time per launch (CUDA graph replay, inputs rotated beyond L2, median); best = fastest f32-acc "
          "variant")
    print(f"{'shape':>16} {'B':>3} {'torch us':>9} {'TFLOP/s':>8} {'best us':>9} {'TFLOP/s':>8} {'speedup':>7}  best")
    for shape, flop, bl, cub, (name, us, kn) in rows:
        cub_tf = flop / cub / 1e6
        tf = flop / us / 1e6 if us != float("inf") else 0.0
        print(f"{shape:>16} {bl:>3} {cub:9.2f} {cub_tf:8.1f} {us:9.2f} {tf:8.1f} {cub / us:7.2f}  {name} {kn or ''}")
    for h in host:
        print(f"host us/call 64x4096x64: {h['kernel']}: {h['call_us']:.2f} (C side {h['c_side_us']:.2f}); "
              f"torch.matmul {h['torch_matmul_us']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
