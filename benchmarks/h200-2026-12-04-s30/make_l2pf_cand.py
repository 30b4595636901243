"""Candidate tables for the l2_prefetch experiment (session 30): the committed tables with every col graph choice that
runs an sm90 pdl variant swapped for its l2_prefetch twin (`kernels/space.py` set `l2_prefetch`), eager choices
unchanged; and a seeded sample of the changed shapes per accumulator, for scripts/h200_ab.sh.

    python benchmarks/h200-2026-12-04-s30/make_l2pf_cand.py OUT_DIR SHAPES_PREFIX [--per-acc N] [--seed S]
        [--rule] [--exclude PREFIX]

--rule swaps only where the prefetch paid in call 1 (`prefetch_pays`); --exclude leaves call 1's sampled shapes
(PREFIX_<acc>_col.txt) out of the sample, so that the rule is checked on shapes it was not read from.
"""
import argparse
import json
import math
import random
from dataclasses import replace
from pathlib import Path

from kernels import space
from kernels.config import KernelConfig

REPO = Path(__file__).resolve().parents[2]
SMS = 132
SMEM_BYTES = 232448 - 8192  # sm90's 227 KB less ~8 KB of epilogue carveout: an estimate of the auto stage count


def prefetch_pays(cfg: KernelConfig, m: int, n: int, k: int) -> bool:
    """Call 1's split (200 shapes, both roles agreeing per shape): the twin won where at most 64 CTAs run (idle SMs
    take the next grid's CTAs early, so the prefetch overlaps the previous grid) or where a CTA prefetches at most
    ~100 KB; it lost (0.76-0.97x) where >= 128 CTAs each prefetched 130-220 KB (the TMA unit busy with prefetches
    ahead of the loads, with nothing to overlap)."""
    tm, tn, tk = cfg.tile
    ctas = min(math.ceil(m / tm) * math.ceil(n / tn), SMS)
    stage_bytes = (tm + tn) * tk * 2
    k_tiles = min(math.ceil(k / tk), SMEM_BYTES // stage_bytes)
    return ctas <= 64 or k_tiles * stage_bytes <= 100 * 1024


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("shapes_prefix")
    p.add_argument("--per-acc", type=int, default=100)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--rule", action="store_true")
    p.add_argument("--exclude")
    args = p.parse_args()
    twins = {replace(c, l2_prefetch=False).name: c for c in space.variant_set("l2_prefetch")}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for acc in ("f32", "f16"):
        table = json.loads((REPO / f"kernels/tables/sm90_{acc}.json").read_text())
        changed = []
        for entry in table["entries"]:
            if entry["b_layout"] != "col":
                continue
            graph = entry.get("graph") or {k: entry[k] for k in ("kernel", "config", "runtime", "us", "acc") if k in entry}
            twin = twins.get(graph["kernel"])
            if twin is None:
                continue
            assert KernelConfig.from_dict(graph["config"]) == replace(twin, l2_prefetch=False)
            m, n, k = entry["m"], entry["n"], entry["k"]
            if args.rule and not prefetch_pays(twin, m, n, k):
                continue
            entry["graph"] = {**graph, "kernel": twin.name, "config": twin.to_dict()}
            changed.append((2.0 * m * n * k, f"{m}_{n}_{k}"))
        (args.out_dir / f"sm90_{acc}.json").write_text(json.dumps(table, indent=1) + "\n")
        buckets = {"<1e9": 0, "1e9-1e11": 0, ">1e11": 0}
        for flop, _ in changed:
            buckets["<1e9" if flop < 1e9 else "1e9-1e11" if flop <= 1e11 else ">1e11"] += 1
        excluded = set(Path(f"{args.exclude}_{acc}_col.txt").read_text().split()) if args.exclude else set()
        pool = sorted(s for _, s in changed if s not in excluded)
        sample = sorted(random.Random(f"{args.seed}:{acc}").sample(pool, min(args.per_acc, len(pool))))
        Path(f"{args.shapes_prefix}_{acc}_col.txt").write_text("\n".join(sample) + "\n")
        print(f"{acc}: {len(changed)} col graph choices swapped {buckets}; sample {len(sample)}")


if __name__ == "__main__":
    main()
