"""Candidate tables for the l2_prefetch experiment (session 30): the committed tables with every col graph choice that
runs an sm90 pdl variant swapped for its l2_prefetch twin (`kernels/space.py` set `l2_prefetch`), eager choices
unchanged; and a seeded sample of the changed shapes per accumulator, for scripts/h200_ab.sh.

    python benchmarks/h200-2026-12-04-s30/make_l2pf_cand.py OUT_DIR SHAPES_PREFIX [--per-acc N] [--seed S]
"""
import argparse
import json
import random
from dataclasses import replace
from pathlib import Path

from kernels import space
from kernels.config import KernelConfig

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("shapes_prefix")
    p.add_argument("--per-acc", type=int, default=100)
    p.add_argument("--seed", type=int, default=30)
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
            entry["graph"] = {**graph, "kernel": twin.name, "config": twin.to_dict()}
            m, n, k = entry["m"], entry["n"], entry["k"]
            changed.append((2.0 * m * n * k, f"{m}_{n}_{k}"))
        (args.out_dir / f"sm90_{acc}.json").write_text(json.dumps(table, indent=1) + "\n")
        buckets = {"<1e9": 0, "1e9-1e11": 0, ">1e11": 0}
        for flop, _ in changed:
            buckets["<1e9" if flop < 1e9 else "1e9-1e11" if flop <= 1e11 else ">1e11"] += 1
        sample = sorted(random.Random(f"{args.seed}:{acc}").sample(sorted(s for _, s in changed),
                                                                     min(args.per_acc, len(changed))))
        Path(f"{args.shapes_prefix}_{acc}_col.txt").write_text("\n".join(sample) + "\n")
        print(f"{acc}: {len(changed)} col graph choices swapped {buckets}; sample {len(sample)}")


if __name__ == "__main__":
    main()
