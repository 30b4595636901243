"""The row twins of the col choices, as a sweep: for each B row-major entry whose choice is not the row twin of its
col entry's choice (same shape, same role), that twin; a list for `eval_one_file.sh --b_layout row
--also_variants_per_shape F`, whose results `tuner.confirm` turns into corrections (an `ours:<twin>` that ran >= 3%
faster than the table's choice, in the same interleaved run, becomes the choice).

Why: the row tables were tuned over the row twins of the col winners (variant set tables_row), but a shape's search
often never reached the twin of its own col winner (512x16384x128 f32: 12 trials, all on one variant's knobs). On the
1e9-1e11 FLOP shapes session 17's grids measured the row entries 1.067x / 1.080x over torch.matmul kernel-only against
the col entries' 1.095x / 1.101x; where they differ most the row entry runs cuBLAS and the col one an sm90 variant
~20% faster than torch.matmul.

The other direction (`--layout col`): the col twins of the row choices, for the col entries (the row search started
from col winners of other shapes, so a row entry sometimes found a variant its own col search never reached).

    python -m tuner.twin_sweep --acc f32 [--tables kernels/tables] [--layout row|col] [--min-flop 1e9]
        [--max-flop 1e11] [--library-only] --out F
"""
from __future__ import annotations

import argparse
from pathlib import Path

from tuner.confirm import choice

VARIANT_FAMILIES = ("sm90", "sm80", "splitk")  # built variants, which have row twins; cuBLAS arms do not


def twin(arm: dict, b_layout: str = "row") -> str | None:
    """The name of the B `b_layout` twin of an arm that is a built variant, else None."""
    from kernels.config import KernelConfig

    config = arm.get("config") or {}
    if config.get("family") not in VARIANT_FAMILIES:
        return None
    return KernelConfig.from_dict(dict(config, b_layout=b_layout)).name


def sweep(entries: list[dict], min_flop: float = 0.0, max_flop: float = float("inf"),
          library_only: bool = False, layout: str = "row") -> dict[str, list[str]]:
    """{M_N_K: [twin, ...]} over the shapes with both a col and a row entry, FLOP in [min_flop, max_flop]: for the
    `layout` entries, the twins of the other layout's graph and eager choices that the entry does not already run in
    that role. library_only: only where the entry's choice in that role is a cuBLAS / cuBLASLt arm."""
    other_layout = "col" if layout == "row" else "row"
    other = {(e["m"], e["n"], e["k"]): e for e in entries if e["b_layout"] == other_layout}
    out: dict[str, list[str]] = {}
    for e in entries:
        key = (e["m"], e["n"], e["k"])
        if e["b_layout"] != layout or key not in other or not min_flop <= 2 * key[0] * key[1] * key[2] <= max_flop:
            continue
        for role in ("graph", "eager"):
            twin_name, current = twin(choice(other[key], role), layout), choice(e, role)
            if library_only and (current.get("config") or {}).get("family") in VARIANT_FAMILIES:
                continue
            if twin_name is not None and twin_name != current.get("kernel"):
                names = out.setdefault("_".join(map(str, key)), [])
                if twin_name not in names:
                    names.append(twin_name)
    return out


def main(argv=None) -> int:
    from tuner.eval_cli import write_variants_per_shape
    from tuner.results import read_json

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", default="kernels/tables", help="directory of sm90_<acc>.json")
    p.add_argument("--acc", required=True, choices=("f32", "f16"))
    p.add_argument("--layout", default="row", choices=("row", "col"),
                   help="the B layout whose entries are swept (their twins come from the other layout's choices)")
    p.add_argument("--min-flop", type=float, default=0.0)
    p.add_argument("--max-flop", type=float, default=float("inf"))
    p.add_argument("--library-only", action="store_true",
                   help="only where the entry runs a cuBLAS / cuBLASLt arm in that role (the largest gaps)")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    table = read_json(Path(args.tables) / f"sm90_{args.acc}.json")
    found = sweep(table["entries"], args.min_flop, args.max_flop, args.library_only, args.layout)
    write_variants_per_shape(args.out, found)
    twins = {name for names in found.values() for name in names}
    print(f"{len(found)} shapes, {len(twins)} distinct twins -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
