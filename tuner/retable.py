"""`python -m tuner.retable`: rebuild a tuned table from finished tuning records, without a GPU.

    python -m tuner.retable --state benchmarks/h200-2026-11-30-s2/tune --acc f32 --b-layout col \
        --objective call --out /tmp/sm90_f32_call.json [--host-us sm80=5.7] [--kernel-floor 0.97] [--min-speedup 1.01]
    python -m tuner.retable --state RUN3 --state RUN2 --acc f16 --borrow-f32 --out kernels/tables/sm90_f16.json

The records (`finished_<acc>_<layout>.jsonl`, or `.jsonl.gz`) keep every trial of every shape, so a table for another
objective (tuner/objective.py) or another --min-speedup is a pure function of them. The table's meta (GPU, driver,
date, commit of the tuning run) is taken from --meta-from (default: the table at --out, if any) and records the
objective used. `--state` may be given once per tuning run: the records are merged (tuner/merge.py; the first run is
the base); `--state DIR+DIR` is one run kept in parts (a resumed run whose new records were committed apart).
`--borrow-f32` (f16 tables): an entry runs the f32 table's choice of its shape when that is faster by
--borrow-margin (tuner/merge.py says why that is allowed and how it is judged); `--borrow-large FLOP=MARGIN` gives
the shapes above FLOP their own margin. `--search-figures` judges records of a run with `--retime-top` by their
search's own figures (tuner/retime.py: the same trials, for a paired comparison). `--graph-objective kernel` adds to
each entry whose choice differs under that objective a `graph` choice, which calls captured into a CUDA graph run
(no launch cost per replay: the fastest kernel is what they need; tuner/tables.py, kernels/tuned_tables.py).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter
from pathlib import Path

from tuner.objective import OBJECTIVES, Objective
from tuner.retime import undo


def read_records(state: Path, acc: str, b_layout: str) -> list[dict]:
    for path in (state / f"finished_{acc}_{b_layout}.jsonl", state / f"finished_{acc}_{b_layout}.jsonl.gz"):
        if path.exists():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt") as f:
                records = {}
                for line in f:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:  # a torn last line (the store tolerates it too)
                        continue
                    records[record["mnk"]] = record
                return list(records.values())
    raise FileNotFoundError(f"no finished_{acc}_{b_layout}.jsonl(.gz) in {state}")


def read_run(spec: str, acc: str, b_layout: str) -> list[dict]:
    """The records of one tuning run. `spec` is a folder, or folders joined by "+" for a run kept in parts (resumed
    later and committed as only its new lines): a later part's record of a shape replaces an earlier one's."""
    records: dict[str, dict] = {}
    for part in spec.split("+"):
        for record in read_records(Path(part), acc, b_layout):
            records[record["mnk"]] = record
    return list(records.values())


def configs_of(records: list[dict], acc: str, b_layout: str) -> dict[str, dict]:
    """Config dicts by variant name for every variant the records tried: the enumerated space plus the named sets'
    members outside it (pdl twins), so that a trial of any built variant can become a table entry."""
    from kernels import space
    from tuner.arms import from_kernel_space
    from tuner.lt_arms import LT

    _, configs = from_kernel_space(acc, b_layout, None)
    out = {name: cfg.to_dict() for name, cfg in configs.items()}
    for record in records:
        for trial in record["trials"]:
            name = trial["arm"]["config"]
            if name not in out and trial["arm"]["family"] != LT:
                out[name] = space.config_named(name).to_dict()
    return out


def main(argv=None) -> int:
    from tuner.tables import merge_entries, meta_key, read_table, with_graph, write_table
    from tuner.grid_report import family
    from tuner.merge import borrow_more_precise, merge_runs
    from tuner.tune_cli import ACC, objective_of, table_entry

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--state", required=True, action="append",
                   help="folder of finished_<acc>_<layout>.jsonl(.gz), or DIR+DIR for one run kept in parts (resumed); "
                        "repeat to merge runs (the first is the base)")
    p.add_argument("--acc", choices=tuple(ACC), default="f32")
    p.add_argument("--b-layout", choices=("col", "row"), default="col")
    p.add_argument("--objective", choices=OBJECTIVES, default="kernel")
    p.add_argument("--host-us", default=None)
    p.add_argument("--kernel-floor", type=float, default=0.97)
    p.add_argument("--lone-pdl", action="store_true",
                   help="--objective call: cost pdl variants with their base's kernel time (tuner/objective.py)")
    p.add_argument("--pdl-alone-factor", type=float, default=None, metavar="F",
                   help="--lone-pdl: a pdl variant without a timed base costs F x its back-to-back time per call "
                        "(default: left out of per-call choices)")
    p.add_argument("--mid-floor", type=float, default=None, metavar="F",
                   help="--objective call: past the host-bound gate, the least kernel + host time among arms whose "
                        "kernel is within F of the fastest (default: the fastest kernel there)")
    p.add_argument("--loop-guard", action="store_true",
                   help="--objective call: beyond --kernel-floor, an arm is eligible for eager calls when it runs no "
                        "slower than the fastest kernel's arm in a loop (max of host and kernel time)")
    p.add_argument("--min-speedup", type=float, default=1.01)
    p.add_argument("--out", required=True, help="table to write (entries of other layouts in it are kept)")
    p.add_argument("--borrow-f32", action="store_true", help="f16: take faster f32-accumulating choices")
    p.add_argument("--borrow-margin", type=float, default=1.02)
    p.add_argument("--borrow-large", default=None, metavar="FLOP=MARGIN",
                   help="f16: shapes above FLOP borrow with MARGIN instead (may be < 1), e.g. 1e11=0.97")
    p.add_argument("--search-figures", action="store_true",
                   help="judge re-timed records by the search's own figures (tuner/retime.py)")
    p.add_argument("--meta-from", default=None, help="table whose meta to keep (default: --out if it exists)")
    p.add_argument("--graph-objective", choices=OBJECTIVES, default=None,
                   help="also give each entry this objective's choice for calls captured into a CUDA graph")
    args = p.parse_args(argv)
    acc = ACC[args.acc]
    if args.borrow_f32 and acc != "f16":
        p.error("--borrow-f32 is for f16 tables")
    large = None
    if args.borrow_large:
        if not args.borrow_f32:
            p.error("--borrow-large needs --borrow-f32")
        try:
            flop, margin = (float(x) for x in args.borrow_large.split("="))
        except ValueError:
            p.error(f"--borrow-large wants FLOP=MARGIN, got {args.borrow_large!r}")
        large = (flop, margin)
    objective = objective_of(args)

    def entries_for(acc: str, objective) -> list[dict]:
        runs = [read_run(state, acc, args.b_layout) for state in args.state]
        if args.search_figures:
            runs = [[undo(r) for r in run] for run in runs]
        records = merge_runs(runs)
        configs = configs_of(records, acc, args.b_layout)
        return [table_entry(r, configs, args.b_layout, args.min_speedup, objective) for r in records]

    def table_for(objective) -> tuple[list[dict], int]:
        entries = entries_for(acc, objective)
        if not args.borrow_f32:
            return entries, 0
        return borrow_more_precise(entries, entries_for("f32", objective), objective, args.borrow_margin, large)

    entries, borrowed = table_for(objective)
    graph = None
    if args.graph_objective:
        graph_objective = Objective(args.graph_objective, objective.host_us, objective.kernel_floor)
        graph_entries, graph_borrowed = table_for(graph_objective)
        entries, alternatives = with_graph(entries, graph_entries)
        graph = {**graph_objective.describe(), "alternatives": alternatives}
        if args.borrow_f32:
            graph["borrowed_f32"] = graph_borrowed
    out = Path(args.out)
    source = Path(args.meta_from) if args.meta_from else out
    old = read_table(source) if source.exists() else {"meta": {"acc": acc, "arch": "sm90"}, "entries": []}
    meta = dict(old["meta"])
    # "tuner" describes the col entries (the grid's layout, the one the benchmark's corrections apply to), "tuner_row"
    # the row ones: a retable of one layout leaves the other's entries and description as they were
    key = meta_key("tuner", args.b_layout)
    # a benchmark's corrections of this layout (tuner.confirm) describe the old entries, not these
    meta.pop(meta_key("confirmed", args.b_layout), None)
    # nor does the record of moves to the l2_prefetch twins (tuner.prefetch_twins, run after the last retable)
    meta.pop("l2_prefetch_twins", None)
    tuner = meta[key] = {**meta.get(key, {}), **objective.describe(), "min_speedup": args.min_speedup,
                         "runs_merged": len(args.state)}
    if args.search_figures:
        tuner["search_figures"] = True
    if args.borrow_f32:
        tuner.update(borrowed_f32=borrowed, borrow_margin=args.borrow_margin)
        if large is not None:
            tuner["borrow_large"] = {"flop": large[0], "margin": large[1]}
    tuner.pop("graph", None)
    if graph is not None:
        tuner["graph"] = graph
    kept = [e for e in (old["entries"] if source == out else []) if e["b_layout"] != args.b_layout]
    write_table(out, meta, merge_entries(kept, entries))
    kinds = Counter(family(e["kernel"]) for e in entries)
    print(json.dumps({"table": str(out), "entries": len(entries), "kernels": kinds, "runs_merged": len(args.state),
                      "borrowed_f32": borrowed, **objective.describe(), "graph": graph}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
