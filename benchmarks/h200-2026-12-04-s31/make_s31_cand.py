"""Candidate tables for the splitk l2_prefetch twins (session 31) and the row twins (session 30's call 4, not run):
the committed tables with
  - every col and row graph choice on a splitk pdl variant moved to its twin (kernels/codegen/l2_prefetch_splitk.cuh;
    session 30's rule says every one of them pays: at most 64 CTAs, or at most 64-128 KB per CTA), and
  - the row graph choices on sm90 pdl variants moved by that rule (what `tuner.prefetch_twins --b-layout row` does),
eager choices unchanged; and the shapes to A/B per accumulator and layout, for scripts/h200_ab_layouts.sh:
  col: every changed col shape (65 f32 / 80 f16);
  row: session 30's sample of 80 sm90 row changes (l2row_<acc>_row.txt) plus a seeded sample of the splitk ones.

    python benchmarks/h200-2026-12-04-s31/make_s31_cand.py OUT_DIR SHAPES_PREFIX [--row-splitk N] [--seed S]

--capped instead: the col graph choices on sm90 pdl variants that the rule leaves (the full prefetch lost there: 164
f32 / 216 f16, mostly 1e9-1e11 FLOP) moved to their capped twins (set l2_prefetch_capped, at most 64 KB per CTA), and
a seeded sample of --per-acc of them per accumulator (SHAPES_PREFIX_<acc>_col.txt).
"""
import argparse
import json
import random
from dataclasses import replace
from pathlib import Path

from kernels.config import KernelConfig
from kernels.space import L2_PREFETCH_CAP_KB, l2_prefetch_twin
from tuner.prefetch_twins import prefetch_pays, swap_in_twins

REPO = Path(__file__).resolve().parents[2]
ROW_SM90_SAMPLE = REPO / "benchmarks/h200-2026-12-04-s30/l2row_{acc}_row.txt"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("shapes_prefix")
    p.add_argument("--row-splitk", type=int, default=40, help="splitk row changes sampled per accumulator")
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--capped", action="store_true")
    p.add_argument("--per-acc", type=int, default=100, help="--capped: changed shapes sampled per accumulator")
    args = p.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.capped:
        return capped(args)
    for acc in ("f32", "f16"):
        table = json.loads((REPO / f"kernels/tables/sm90_{acc}.json").read_text())
        col = swap_in_twins(table, "col", lambda *_: True, families=("splitk",))
        row_splitk = swap_in_twins(table, "row", lambda *_: True, families=("splitk",))
        row_sm90 = swap_in_twins(table, "row", prefetch_pays)
        (args.out_dir / f"sm90_{acc}.json").write_text(json.dumps(table, indent=1) + "\n")
        sm90_sample = Path(str(ROW_SM90_SAMPLE).format(acc=acc)).read_text().split()
        assert set(sm90_sample) <= set(row_sm90), "session 30's row sample is no longer what the rule moves"
        splitk_sample = random.Random(f"{args.seed}:{acc}").sample(sorted(row_splitk),
                                                                   min(args.row_splitk, len(row_splitk)))
        Path(f"{args.shapes_prefix}_{acc}_col.txt").write_text("\n".join(sorted(col)) + "\n")
        Path(f"{args.shapes_prefix}_{acc}_row.txt").write_text("\n".join(sorted(sm90_sample + splitk_sample)) + "\n")
        print(f"{acc}: col splitk {len(col)}; row splitk {len(row_splitk)} (sampled {len(splitk_sample)}), "
              f"row sm90 {len(row_sm90)} (sampled {len(sm90_sample)})")


def _rule_leaves(cfg: KernelConfig, m: int, n: int, k: int, splits: int) -> bool:
    """cfg is a capped twin: whether the rule leaves its uncapped twin out (the shapes the capped twins are for)."""
    return not prefetch_pays(replace(cfg, l2_prefetch_kb=0), m, n, k, splits)


def capped(args) -> None:
    for acc in ("f32", "f16"):
        table = json.loads((REPO / f"kernels/tables/sm90_{acc}.json").read_text())
        keys = swap_in_twins(table, "col", _rule_leaves, twin_of=lambda cfg: l2_prefetch_twin(cfg, L2_PREFETCH_CAP_KB))
        (args.out_dir / f"sm90_{acc}.json").write_text(json.dumps(table, indent=1) + "\n")
        sample = sorted(random.Random(f"{args.seed}:cap:{acc}").sample(sorted(keys), min(args.per_acc, len(keys))))
        Path(f"{args.shapes_prefix}_{acc}_col.txt").write_text("\n".join(sample) + "\n")
        print(f"{acc}: {len(keys)} col graph choices moved to capped twins; sample {len(sample)}")


if __name__ == "__main__":
    main()
