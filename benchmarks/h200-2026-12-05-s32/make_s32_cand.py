"""Candidate tables for session 32's capped experiments (for the next session with a device): the committed tables
with the graph choices their L2 prefetch rules leave on pdl variants moved to twins capped at 64 KB per CTA
(kernels.space.L2_PREFETCH_CAP_KB):
  - splitk, both layouts: every one (the full prefetch lost where the grid prefetched > 4 MiB; capped, most of them
    would prefetch 4 MiB or less) — sets l2_prefetch_splitk_capped;
  - sm90, row: every one (the col ones run capped twins since session 32, +2.4% / +2.0%) — set l2_prefetch_capped_row;
and the shapes to A/B per accumulator and layout (scripts/h200_ab_layouts.sh): col every changed shape, row every
splitk one plus a seeded sample of the sm90 ones. --pack-dir also writes, per layout, the two tables cut to that
layout's entries, so that one pack per layout holds what its A/B runs (both layouts' together pass the 64 MiB carry).

    python benchmarks/h200-2026-12-05-s32/make_s32_cand.py OUT_DIR SHAPES_PREFIX [--row-sm90 N] [--pack-dir DIR]
"""
import argparse
import json
import random
from pathlib import Path

from kernels.space import L2_PREFETCH_CAP_KB, l2_prefetch_twin
from tuner.prefetch_twins import swap_in_twins

REPO = Path(__file__).resolve().parents[2]


def capped(cfg):
    return l2_prefetch_twin(cfg, L2_PREFETCH_CAP_KB)


def everywhere(*_):
    return True


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("shapes_prefix")
    p.add_argument("--row-sm90", type=int, default=80, help="row sm90 changes sampled per accumulator")
    p.add_argument("--seed", type=int, default=32)
    p.add_argument("--pack-dir", type=Path, help="write DIR/<layout>/{committed,cand}/sm90_<acc>.json")
    args = p.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for acc in ("f32", "f16"):
        committed = json.loads((REPO / f"kernels/tables/sm90_{acc}.json").read_text())
        table = json.loads(json.dumps(committed))
        col = swap_in_twins(table, "col", everywhere, families=("splitk",), twin_of=capped)
        row_splitk = swap_in_twins(table, "row", everywhere, families=("splitk",), twin_of=capped)
        row_sm90 = swap_in_twins(table, "row", everywhere, families=("sm90",), twin_of=capped)
        (args.out_dir / f"sm90_{acc}.json").write_text(json.dumps(table) + "\n")  # compact: it travels
        sample = random.Random(f"{args.seed}:{acc}").sample(sorted(row_sm90), min(args.row_sm90, len(row_sm90)))
        Path(f"{args.shapes_prefix}_{acc}_col.txt").write_text("\n".join(sorted(col)) + "\n")
        Path(f"{args.shapes_prefix}_{acc}_row.txt").write_text("\n".join(sorted(row_splitk + sample)) + "\n")
        print(f"{acc}: col splitk {len(col)}; row splitk {len(row_splitk)}, row sm90 {len(row_sm90)} "
              f"(sampled {len(sample)})")
        for layout in ("col", "row") if args.pack_dir else ():
            for name, source in (("committed", committed), ("cand", table)):
                cut = {**source, "entries": [e for e in source["entries"] if e["b_layout"] == layout]}
                out = args.pack_dir / layout / name
                out.mkdir(parents=True, exist_ok=True)
                (out / f"sm90_{acc}.json").write_text(json.dumps(cut) + "\n")


if __name__ == "__main__":
    main()
