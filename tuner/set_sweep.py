"""A variant set as a sweep: for the table entries a filter selects (K, output tiles, FLOP), every member of the set
that runs the shape, fits it (each of its cluster's CTAs gets rows and columns) and is not the entry's choice already,
as a list for `eval_one_file.sh --also_variants_per_shape F` (scripts/h200_twin_sweep.sh times them beside the
tables' choices in one interleaved run), whose results `tuner.confirm` turns into corrections (an `ours:<variant>`
that ran >= 3% faster than the table's choice becomes the choice).

Why: a new set is measured where it is meant to win, on every such shape, at the cost of one benchmark run, instead of
a tuning run whose budget goes to arms the tables hold already. First user: `small_k` (kernels/space.py) over the
large outputs with a short K.

    python -m tuner.set_sweep --set small_k --acc f32 [--layout col] [--max-k 256] [--min-tiles 264]
        [--min-flop 0] [--max-flop inf] [--tables kernels/tables] [--rank RESULTS] --out F

--min-tiles: output tiles of 128x128 (264 = two waves on 132 SMs). --rank: a grid run of the tables
(results.json(.gz)); the shapes are listed worst first by ours' kernel-only time over torch.matmul's there, so a sweep
cut by its deadline has timed the largest gaps.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from tuner.confirm import choice


def fits(cfg, m: int, n: int) -> bool:
    """Every CTA of a cluster has rows and columns of an m x n output."""
    (cm, cn), (tm, tn, _) = cfg.cluster, cfg.tile
    return cm * tm <= m and cn * tn <= n


def selected(m: int, n: int, k: int, max_k: int, min_tiles: int, min_flop: float, max_flop: float) -> bool:
    return k <= max_k and math.ceil(m / 128) * math.ceil(n / 128) >= min_tiles and min_flop <= 2 * m * n * k <= max_flop


def sweep(entries: list[dict], configs: list, acc: str, layout: str = "col", max_k: int = 256, min_tiles: int = 264,
          min_flop: float = 0.0, max_flop: float = float("inf")) -> dict[str, list[str]]:
    """{M_N_K: [variant, ...]} over the `layout` entries the filter selects. A variant accumulating in fp32 is listed
    for an f16 table too (f16 entries may run fp32-accumulating arms; the eval times those in an f16 run)."""
    from kernels import space

    out: dict[str, list[str]] = {}
    for e in entries:
        m, n, k = e["m"], e["n"], e["k"]
        if e["b_layout"] != layout or not selected(m, n, k, max_k, min_tiles, min_flop, max_flop):
            continue
        current = {choice(e, role).get("kernel") for role in ("graph", "eager")}
        names = [c.name for c in configs
                 if c.acc in (acc, "f32") and c.b_layout == layout and c.name not in current
                 and space.supports(c, m, n, k) and fits(c, m, n)]
        if names:
            out[f"{m}_{n}_{k}"] = names
    return out


def worst_first(found: dict[str, list[str]], results: dict) -> dict[str, list[str]]:
    """found reordered by ours' kernel-only time over torch.matmul's in a grid run, largest ratio first."""
    ratio = {}
    for shape in results["shapes"]:
        ours, ref = (shape["competitors"].get(name) or {} for name in ("ours", "torch.matmul"))
        if ours.get("ok") and ref.get("ok") and ours.get("kernel_us") and ref.get("kernel_us"):
            ratio[shape["mnk"]] = ours["kernel_us"] / ref["kernel_us"]
    return dict(sorted(found.items(), key=lambda item: -ratio.get(item[0], 0.0)))


def write_sweep(found: dict[str, list[str]], out: Path, rank: str | None = None) -> None:
    """The list for --also_variants_per_shape, worst shapes of the grid run `rank` first, and a one-line summary."""
    from tuner.eval_cli import write_variants_per_shape
    from tuner.results import read_json

    if rank:
        found = worst_first(found, read_json(rank))
    write_variants_per_shape(out, found)
    variants = {name for names in found.values() for name in names}
    print(f"{len(found)} shapes, {sum(map(len, found.values()))} arms of {len(variants)} variants -> {out}")


def main(argv=None) -> int:
    from kernels import space
    from tuner.results import read_json

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", required=True, help="the variant set (kernels/space.py) whose members are listed")
    p.add_argument("--tables", default="kernels/tables", help="directory of sm90_<acc>.json")
    p.add_argument("--acc", required=True, choices=("f32", "f16"))
    p.add_argument("--layout", default="col", choices=("row", "col"))
    p.add_argument("--max-k", type=int, default=256)
    p.add_argument("--min-tiles", type=int, default=264, help="output tiles of 128x128 at least")
    p.add_argument("--min-flop", type=float, default=0.0)
    p.add_argument("--max-flop", type=float, default=float("inf"))
    p.add_argument("--rank", default=None, help="a grid run's results.json(.gz): its worst shapes first")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    table = read_json(Path(args.tables) / f"sm90_{args.acc}.json")
    write_sweep(sweep(table["entries"], space.variant_sets(args.set), args.acc, args.layout, args.max_k,
                      args.min_tiles, args.min_flop, args.max_flop), args.out, args.rank)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
