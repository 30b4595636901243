"""The skinny sweep: for the shapes with one short side (M or N <= --short), the cluster variants of a set (default
`skinny`, kernels/space.py) that multicast the short side's operand along the long side, as a list for
`eval_one_file.sh --also_variants_per_shape F`, whose results `tuner.confirm` turns into corrections like the twin
sweep's (an `ours:<variant>` that ran >= 3% faster than the table's choice, in the same interleaved run).

Why: on those shapes (memory-bound at 1e9-1e11 FLOP) every CTA streams the short side's whole operand for its tile of
the long side; the tables' choices there are 1.05-1.07x of torch.matmul against 1.07-1.18x elsewhere (session 21's
f32 col grid), and no tuning run had a variant that shares that operand across a cluster along the long side.

A variant is listed for a shape when its cluster spans the long side (along N when M is short, along M when N is
short) and both its cluster's tiles fit the shape (cluster x tile <= M and <= N: no CTA of a cluster left without
rows or columns), and it is not the entry's choice already.

    python -m tuner.skinny_sweep --acc f32 [--layout col] [--short 256] [--min-flop 1e9] [--max-flop 1e11]
        [--set skinny] [--tables kernels/tables] [--rank RESULTS] --out F

--rank: a grid run of the tables (results.json(.gz)); the shapes are listed worst first by ours' kernel-only speedup
over torch.matmul there (unmeasured ones last), so a sweep cut by its deadline has timed the largest gaps.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from tuner.confirm import choice
from tuner.set_sweep import write_sweep


def fits(cfg, m: int, n: int, short: int) -> bool:
    """Does variant cfg share the short side's operand of an m x n output along its long side?"""
    (cm, cn), (tm, tn, _) = cfg.cluster, cfg.tile
    along_n, along_m = m <= short and cn > 1, n <= short and cm > 1
    return (along_n or along_m) and cm * tm <= m and cn * tn <= n


def sweep(entries: list[dict], configs: list, acc: str, layout: str = "col", short: int = 256,
          min_flop: float = 0.0, max_flop: float = float("inf")) -> dict[str, list[str]]:
    """{M_N_K: [variant, ...]} over the `layout` entries with FLOP in [min_flop, max_flop] and a short side."""
    from kernels import space

    out: dict[str, list[str]] = {}
    for e in entries:
        m, n, k = e["m"], e["n"], e["k"]
        if e["b_layout"] != layout or not min_flop <= 2 * m * n * k <= max_flop:
            continue
        current = {choice(e, role).get("kernel") for role in ("graph", "eager")}
        names = [c.name for c in configs
                 if c.acc == acc and c.b_layout == layout and c.name not in current
                 and space.supports(c, m, n, k) and fits(c, m, n, short)]
        if names:
            out[f"{m}_{n}_{k}"] = names
    return out


def main(argv=None) -> int:
    from kernels import space
    from tuner.results import read_json

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", default="kernels/tables", help="directory of sm90_<acc>.json")
    p.add_argument("--acc", required=True, choices=("f32", "f16"))
    p.add_argument("--layout", default="col", choices=("row", "col"))
    p.add_argument("--short", type=int, default=256, help="a side this short or shorter makes a shape skinny")
    p.add_argument("--min-flop", type=float, default=0.0)
    p.add_argument("--max-flop", type=float, default=float("inf"))
    p.add_argument("--set", default="skinny", help="the variant set whose cluster variants are listed")
    p.add_argument("--rank", default=None, help="a grid run's results.json(.gz): its worst shapes first")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    table = read_json(Path(args.tables) / f"sm90_{args.acc}.json")
    write_sweep(sweep(table["entries"], space.variant_sets(args.set), args.acc, args.layout, args.short,
                      args.min_flop, args.max_flop), args.out, args.rank)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
