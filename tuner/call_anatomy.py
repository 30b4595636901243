"""What a per-call sample is made of. The grid's per-call timing (tuner.timing: sync, call, sync, wall clock) is split
at the call's return into the host part (Python + launch, until the call returns) and the wait (the queued GPU work,
its launch latency and the completion reaching the host, until the synchronization returns), for our dispatcher,
torch.matmul and our cuBLAS wrapper, beside two floors that run no GEMM: a sync around nothing, and one tiny torch
kernel (out.fill_). Interleaved as the grid interleaves them (every competitor's graph replay between the samples),
each GEMM checked against the fp64 reference before it is timed.

    python -m tuner.call_anatomy --shapes 64_128_64,512_512_1024 --acc f32 [--b-layout col] [--seconds 1] [--out F]

Why: the per-call goal below 1e9 FLOP (2.5x over torch.matmul) is a ratio of sums of these parts; the floors say how
much of each sample no kernel can remove."""
from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from tuner.timing import order_rng, run_interleaved

FLOORS = ("sync only", "torch fill_")
PARTS = ("total", "host", "wait")


@dataclass
class SplitCallSampler:
    """A per-call sample as tuner.timing.CallSampler takes it (each call on the next operand copy of a shared
    counter), also keeping its host and wait parts in µs."""
    fn: Callable
    argsets: Sequence[tuple]
    sync: Callable[[], None]
    counter: itertools.count
    clock: Callable[[], float] = time.perf_counter
    host: list = field(default_factory=list)
    wait: list = field(default_factory=list)

    def __call__(self) -> float:
        args = self.argsets[next(self.counter) % len(self.argsets)]
        self.sync()
        t0 = self.clock()
        self.fn(*args)
        t1 = self.clock()
        self.sync()
        t2 = self.clock()
        self.host.append((t1 - t0) * 1e6)
        self.wait.append((t2 - t1) * 1e6)
        return (t2 - t0) * 1e6

    def medians(self, last: int) -> dict[str, float]:
        """Of the last `last` samples (those the run recorded: its warm-up's come first)."""
        host, wait = self.host[-last:], self.wait[-last:]
        return {"total": statistics.median(h + w for h, w in zip(host, wait)), "host": statistics.median(host),
                "wait": statistics.median(wait), "samples": len(host)}


def measure(samplers: dict[str, dict[str, Callable[[], float]]], warmup_seconds: float, seconds: float,
            rng: random.Random) -> dict[str, dict[str, float]]:
    """The medians of each competitor's per-call parts, over the samples run_interleaved recorded (not its warm-up)."""
    recorded = run_interleaved(samplers, warmup_seconds, seconds, rng=rng)
    return {name: by_timing["call"].medians(len(recorded[name].call)) for name, by_timing in samplers.items()}


def shape_anatomy(m: int, n: int, k: int, acc: str, b_layout: str, warmup_seconds: float, seconds: float,
                  seed: int = 0, replays: bool = True, variants: Sequence[str] = (),
                  fast_paths: Sequence[str] = ()) -> dict:
    """replays: each GEMM's graph replay (~2 ms of back-to-back launches) runs between the samples, as in the grid;
    without, the samples follow each other (a caller making lone calls with little else on the GPU). variants: built
    variants to time as well, as `ours:<name>` (e.g. a pdl twin and its base: does the attribute cost a lone call?).
    fast_paths: more dispatchers with the same tables whose C fast path reads operands another way, as
    `ours[<how>]` (tuner.eval_cli FAST_PATHS: reader, attributes, off)."""
    import torch

    from tuner import competitors as comp
    from tuner.correctness import check, reference
    from tuner.inputs import copies_needed, device_l2_bytes, make_operands
    from tuner.eval_cli import rule_dispatchers
    from tuner.timing import GraphSampler

    sync = torch.cuda.synchronize
    device = torch.device("cuda", torch.cuda.current_device())
    copies = copies_needed(m, n, k, device_l2_bytes(device))
    ops = make_operands(m, n, k, copies, device=device, seed=seed)
    ref = reference(ops.a[0], ops.b_row[0])
    gemms = [comp.ours_dispatcher(m, n, k, b_layout, acc), comp.torch_matmul(),
             *comp.baselines(acc, m, n, k, judge=None, names=("cuBLAS-tn",)), *_variants(variants, acc, b_layout),
             *(comp.ours_dispatcher(m, n, k, b_layout, acc, dispatcher, name)
               for name, dispatcher in rule_dispatchers({how: ("fastpath", how) for how in fast_paths}).items())]
    floors = [comp.Competitor(FLOORS[0], lambda a, b, out: None, b_layout),
              comp.Competitor(FLOORS[1], lambda a, b, out: out.fill_(1.0), b_layout)]
    failed = {}
    for c in gemms:
        result = check(c.fn, c.b_layout, acc, ops.a[0], ops.b_row[0], ops.b_col[0], ops.out[0], ref=ref, sync=sync)
        if not result.ok:
            failed[c.name] = result.reason
    counter = itertools.count()
    samplers = {}
    for c in [*gemms, *floors]:
        if c.name in failed:
            continue
        argsets = [(ops.a[i], ops.b(i, c.b_layout), ops.out[i]) for i in range(copies)]
        samplers[c.name] = {"call": SplitCallSampler(c.fn, argsets, sync, counter)}
        if replays and c in gemms:  # the other competitors' replays between samples, as in the grid
            samplers[c.name]["kernel"] = GraphSampler(c.fn, argsets)
    parts = measure(samplers, warmup_seconds, seconds, order_rng(seed, f"{m}_{n}_{k}"))
    del ops, ref, samplers
    torch.cuda.empty_cache()
    return {"mnk": f"{m}_{n}_{k}", "acc": acc, "b_layout": b_layout, "ours_kernel": gemms[0].info.get("kernel"),
            "replays": replays, "parts_us": parts, "failed": failed}


def _variants(names: Sequence[str], acc: str, b_layout: str) -> list:
    from tuner import competitors as comp
    from tuner.eval_cli import parse_also_variants

    variants = parse_also_variants(",".join(names))
    wrong = [v.name for v in variants if (v.cfg.acc, v.cfg.b_layout) != (acc, b_layout)]
    if wrong:
        raise ValueError(f"not {acc} {b_layout} variants: {wrong}")
    return [comp.ours_variant(v.cfg, b_layout, dict(v.knobs)) for v in variants]


def table(records: list[dict]) -> str:
    extra = sorted({name for r in records for name in r["parts_us"] if name.startswith(("ours:", "ours["))})
    names = ["ours", "torch.matmul", "cuBLAS-tn", *FLOORS, *extra]
    lines = [f"{'shape':<18}" + "".join(f"{n[-22:]:>23}" for n in names) + f"{'torch/ours':>11}",
             f"{'(total host wait)':<18}" + "".join(f"{'µs':>23}" for _ in names)]
    for r in records:
        p = r["parts_us"]
        cells = "".join(f"{'/'.join(f'{p[n][x]:.1f}' for x in PARTS) if n in p else 'failed':>23}" for n in names)
        ratio = p["torch.matmul"]["total"] / p["ours"]["total"] if {"ours", "torch.matmul"} <= p.keys() else float("nan")
        lines.append(f"{r['mnk']:<18}{cells}{ratio:>11.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    from tuner.eval_cli import FAST_PATHS
    from tuner.shapes import parse_mnk

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", required=True, help="comma-separated M_N_K")
    p.add_argument("--acc", default="f32", choices=("f32", "f16"))
    p.add_argument("--b-layout", default="col", choices=("col", "row"))
    p.add_argument("--warmup-seconds", type=float, default=0.2)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--no-replays", dest="replays", action="store_false",
                   help="no graph replays between the samples (the grid runs them: they are its kernel-only timing)")
    p.add_argument("--variants", default="", help="comma-separated built variants to time as well (ours:<name>)")
    p.add_argument("--fast-paths", default="",
                   help="comma-separated: more dispatchers (same tables) whose C fast path reads the operands from the "
                        "at::Tensor (reader), through Python attributes (attributes) or is off (off), as ours[<how>]")
    p.add_argument("--out", help="write the records as JSON here")
    args = p.parse_args(argv)
    shapes = [parse_mnk(s) for s in args.shapes.split(",") if s]
    fast_paths = [how for how in args.fast_paths.split(",") if how]
    if not set(fast_paths) <= set(FAST_PATHS):
        p.error(f"--fast-paths: each one of {FAST_PATHS}, got {args.fast_paths!r}")
    records = [shape_anatomy(*s, args.acc, args.b_layout, args.warmup_seconds, args.seconds,
                             replays=args.replays, variants=[v for v in args.variants.split(",") if v],
                             fast_paths=fast_paths)
               for s in shapes]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)
    print(table(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
