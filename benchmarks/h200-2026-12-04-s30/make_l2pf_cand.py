"""Candidate tables for the l2_prefetch experiment (session 30): the committed tables (those of 2d5b2d1, before the
swap was committed) with every col graph choice that runs an sm90 pdl variant swapped for its l2_prefetch twin, eager
choices unchanged; and a seeded sample of the changed shapes per accumulator, for scripts/h200_ab.sh.

    python benchmarks/h200-2026-12-04-s30/make_l2pf_cand.py OUT_DIR SHAPES_PREFIX [--per-acc N] [--seed S]
        [--rule] [--exclude PREFIX]

--rule swaps only where the prefetch paid in call 1 (the rule now in tuner/prefetch_twins.py); --exclude leaves call
1's sampled shapes (PREFIX_<acc>_col.txt) out of the sample, so that the rule is checked on shapes it was not read
from.
"""
import argparse
import json
import math
import random
from pathlib import Path

from tuner.prefetch_twins import prefetch_pays, swap_in_twins

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("shapes_prefix")
    p.add_argument("--per-acc", type=int, default=100)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--rule", action="store_true")
    p.add_argument("--exclude")
    args = p.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for acc in ("f32", "f16"):
        table = json.loads((REPO / f"kernels/tables/sm90_{acc}.json").read_text())
        keys = swap_in_twins(table, "col", pays=prefetch_pays if args.rule else lambda *shape: True)
        changed = [(2.0 * math.prod(map(int, key.split("_"))), key) for key in keys]
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
