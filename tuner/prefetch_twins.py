"""`python -m tuner.prefetch_twins --table T --out O [--b-layout row]`: a table's graph choices of one B layout (calls
captured into a CUDA graph, timed kernel-only) moved to their l2_prefetch twins where the prefetch pays.

An l2_prefetch twin (kernels/codegen/l2_prefetch.cuh) is its pdl variant with one thread prefetching the first tile's
operands into L2 before the kernel waits on the previous grid. Session 30 (call 1, both roles, 200 changed shapes,
per-shape ratios repeated within ~0.5% between roles) measured where that pays, back to back on one stream: at most
64 CTAs (idle SMs take the next grid's CTAs early, so its prefetch overlaps the previous grid: up to 1.33x), or at
most ~100 KB prefetched per CTA (1.0-1.17x with 128-132 CTAs); 128-132 CTAs prefetching 130-220 KB each ran
0.76-0.97x (nothing to overlap; the prefetches queue ahead of the TMA loads). Eager choices (lone calls) stay: with no
grid before them the prefetch overlaps nothing.

The splitk variants' twins (kernels/codegen/l2_prefetch_splitk.cuh) follow a rule of their own, read from session
32's A/B (benchmarks/h200-2026-12-04-s31/, calls 1-2: all 145 col and 80 row splitk graph choices moved, both roles
within ~0.5% per shape): what all CTAs prefetch together. Up to 4 MiB (16-64 CTAs of 16-128 KB) they ran 1.02-1.15x
(col geomean 1.106x on 71 shapes, row 1.090x on 36); from 6 MiB on (64 CTAs of 96-192 KB, 128 of 64 KB) mostly
0.86-0.97x. Their kernels are short (3-14 us) and cluster split-K's CTAs load together: the prefetches queue ahead of
the loads as soon as there is much to fetch.

A capped twin (`--cap-kb`, kernels.space.L2_PREFETCH_CAP_KB: whole k-tiles within the cap per CTA) counts only what
it prefetches: with 64 KB the sm90 col graph choices the rule leaves ran 1.024x / 1.020x (f32 / f16, 100 shapes
each, both roles; 0.979-1.17x per shape; session 32, call 3).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from kernels.config import KernelConfig
from kernels.space import l2_prefetch_twin
from tuner.tables import layout_totals, read_table, write_table

SMS = 132  # H200
SMEM_BYTES = 232448 - 8192  # sm90's 227 KB less ~8 KB of epilogue: an estimate of CUTLASS's auto stage count
MAX_EARLY_CTAS = 64
MAX_PREFETCH_BYTES = 100 * 1024
MAX_SPLITK_PREFETCH_BYTES = 4 << 20  # all of a splitk grid's CTAs together


def prefetch_footprint(cfg: KernelConfig, m: int, n: int, k: int, splits: int = 1) -> tuple[int, int]:
    """(CTAs, bytes each prefetches) of cfg's l2_prefetch twin on an m×n×k GEMM: a splitk variant's CTAs are its
    tiles times its splits, each over K / splits; a CTA prefetches up to its pipeline's depth, a capped twin whole
    k-tiles within its cap."""
    tm, tn, tk = cfg.tile
    splits = max(splits, 1) if cfg.family == "splitk" else 1
    ctas = min(math.ceil(m / tm) * math.ceil(n / tn) * splits, SMS)
    stage_bytes = (tm + tn) * tk * 2
    depth = cfg.stages or SMEM_BYTES // stage_bytes
    k_tiles = min(math.ceil(k / splits / tk), depth)
    if cfg.l2_prefetch_k_tiles:
        k_tiles = min(k_tiles, cfg.l2_prefetch_k_tiles)
    return ctas, k_tiles * stage_bytes


def prefetch_pays(cfg: KernelConfig, m: int, n: int, k: int, splits: int = 1) -> bool:
    """Whether cfg's l2_prefetch twin is expected to beat it back to back on an m×n×k GEMM (module docstring); for a
    splitk variant, what all its CTAs prefetch together decides."""
    ctas, per_cta = prefetch_footprint(cfg, m, n, k, splits)
    if cfg.family == "splitk":
        return ctas * per_cta <= MAX_SPLITK_PREFETCH_BYTES
    return ctas <= MAX_EARLY_CTAS or per_cta <= MAX_PREFETCH_BYTES


def swap_in_twins(table: dict, b_layout: str = "col", pays=prefetch_pays, families=("sm90",),
                  twin_of=l2_prefetch_twin) -> list[str]:
    """Move the graph choices of `table` (a tuned table's JSON) on variants of `families` to their twins (`twin_of`)
    where `pays`; returns the M_N_K keys changed. An entry without a graph choice gets one (its eager choice,
    swapped), keeping its `acc`."""
    changed = []
    for entry in table["entries"]:
        if entry["b_layout"] != b_layout:
            continue
        graph = entry.get("graph") or {key: entry[key] for key in ("kernel", "config", "runtime", "us", "acc")
                                       if key in entry}
        if graph["kernel"] in ("cublas", "cublaslt"):
            continue
        twin = twin_of(KernelConfig.from_dict(graph["config"]))
        splits = graph.get("runtime", {}).get("splits", 0)
        if twin is None or twin.family not in families or not pays(twin, entry["m"], entry["n"], entry["k"], splits):
            continue
        entry["graph"] = {**graph, "kernel": twin.name, "config": twin.to_dict()}
        changed.append(f"{entry['m']}_{entry['n']}_{entry['k']}")
    return changed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--b-layout", default="col", choices=("col", "row"))
    p.add_argument("--changed", type=Path, help="also write the changed shapes here, one M_N_K per line (an A/B's list)")
    p.add_argument("--family", action="append", choices=("sm90", "splitk"),
                   help="the families whose graph choices move (repeatable; default: sm90)")
    p.add_argument("--all", action="store_true", help="move every such graph choice, not only where the rule says")
    p.add_argument("--cap-kb", type=int, default=0, metavar="KB",
                   help="move graph choices to their twins capped at KB per CTA (a multiple of 16; the rule "
                        "counts what they prefetch)")
    args = p.parse_args(argv)
    table = read_table(args.table)
    pays = (lambda *_: True) if args.all else prefetch_pays
    families = tuple(dict.fromkeys(args.family or ("sm90",)))
    twin_of = (lambda cfg: l2_prefetch_twin(cfg, args.cap_kb)) if args.cap_kb else l2_prefetch_twin
    changed = swap_in_twins(table, args.b_layout, pays, families, twin_of)
    # the step's record last (the tests read a table's totals from its last step), with the totals after it; a move
    # of other families than sm90's, or against the rule, is counted under its own key
    moved_key = args.b_layout if families == ("sm90",) else f"{args.b_layout}:{'+'.join(families)}"
    moved_key += (f":cap{args.cap_kb}k" if args.cap_kb else "") + (":all" if args.all else "")
    meta = {key: value for key, value in table["meta"].items() if key != "l2_prefetch_twins"}
    moved = {**table["meta"].get("l2_prefetch_twins", {}).get("moved", {}), moved_key: len(changed)}
    meta["l2_prefetch_twins"] = {"max_early_ctas": MAX_EARLY_CTAS, "max_prefetch_bytes": MAX_PREFETCH_BYTES,
                                 "max_splitk_prefetch_bytes": MAX_SPLITK_PREFETCH_BYTES, "moved": moved,
                                 "totals": {layout: layout_totals(table["entries"], layout) for layout in ("col", "row")}}
    write_table(args.out, meta, table["entries"])
    if args.changed:
        args.changed.write_text("".join(f"{key}\n" for key in changed))
    print(f"{args.out}: {len(changed)} {args.b_layout} graph choices moved to their l2_prefetch twins")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
