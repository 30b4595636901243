"""Entries that an A/B measured slower, in both roles, than the table they replaced go back to that table's choice.

An A/B (`scripts/h200_ab.sh`, `tuner/ab.py`) times a candidate table against a base table on the entries that
changed, twice with the roles swapped: role A with ours = the candidate and one ours[NAME] = the base, role B with
ours = the base and one ours[NAME] = the candidate (two dispatchers in one run differ by a few % per call,
`docs/notes.md`). Kernel-only the roles agree, so an entry whose candidate graph choice ran in both roles with the
base's choice at <= margin of its time takes the base's graph choice back. Per call the roles disagree by that
offset, so an eager choice goes back only where it changed and the base's ran at <= margin of the candidate's per-call
time in both roles (the offset favours each side in one role, so both agreeing is beyond it). Only choices that are
still the ones the A/B measured (the candidate table's) are touched.

    python -m tuner.ab_revert --table T --base BASE.json(.gz) --candidate CAND.json(.gz) \\
        --ab ROLE_A_RESULTS,ROLE_B_RESULTS [--ab …] [--margin 0.97] --out T
"""
from __future__ import annotations

import json
from pathlib import Path

from tuner.confirm import MARGIN, choice, with_picks
from tuner.results import read_json


def record_name(candidate: str | Path) -> str:
    """The key of an A/B's record in a table's meta["ab_reverted"]: the candidate table's session and call folders,
    e.g. h200-2026-12-02-s13/call3."""
    return "/".join(Path(candidate).resolve().parts[-4:-2])


def ab_files(folder: str, acc: str, layouts: tuple[str, ...] = ("col", "row"), base: str = "",
             candidate: str = "") -> dict:
    """One A/B's files for an accumulator, as filed under benchmarks/: the base and candidate tables (default: the
    folder's base_tables/ and cand_tables/), each layout's role A and B results ("A,B")."""
    runs = tuple(",".join(f"{folder}/ab_{layout}/fp{acc[1:]}_{role}.results.json.gz" for role in "AB")
                 for layout in layouts)
    return {"base": f"{base or folder + '/base_tables'}/sm90_{acc}.json.gz",
            "candidate": f"{candidate or folder + '/cand_tables'}/sm90_{acc}.json.gz", "ab": runs}


def _other_ours(competitors: dict) -> dict:
    others = [r for name, r in competitors.items() if name.startswith("ours[")]
    if len(others) != 1:
        raise ValueError(f"an A/B run has exactly one ours[NAME] beside ours, got {sorted(competitors)}")
    return others[0]


def _us(result: dict | None, timing: str) -> float | None:
    return result.get(f"{timing}_us") if result and result.get("ok") else None


def base_faster(role_a: dict, role_b: dict, margin: float = MARGIN, timing: str = "kernel") -> set[str]:
    """The shapes (M_N_K) where the base's time (kernel-only or per call) was <= margin x the candidate's in both
    roles."""
    out = set()
    b_shapes = {s["mnk"]: s["competitors"] for s in role_b["shapes"]}
    for shape in role_a["shapes"]:
        other = b_shapes.get(shape["mnk"])
        if other is None:
            continue
        a = shape["competitors"]
        cand_a, base_a = _us(a.get("ours"), timing), _us(_other_ours(a), timing)
        base_b, cand_b = _us(other.get("ours"), timing), _us(_other_ours(other), timing)
        if None in (cand_a, base_a, base_b, cand_b):
            continue
        if base_a <= margin * cand_a and base_b <= margin * cand_b:
            out.add(shape["mnk"])
    return out


def revert(entries: list[dict], acc: str, base: dict, candidate: dict, runs: list[tuple[dict, dict]],
           margin: float = MARGIN) -> tuple[list[dict], dict[str, int]]:
    """The entries with each choice the runs found slower than the base's set back to the base's (graph: kernel-only,
    eager: per call); and how many of each. base, candidate: tables ({"meta", "entries"}); runs: (role A results,
    role B results) per layout."""
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be in (0, 1], got {margin}")
    keyed = lambda table: {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in table["entries"]}
    base_entries, cand_entries = keyed(base), keyed(candidate)
    slower = {"graph": set(), "eager": set()}
    for role_a, role_b in runs:
        layouts = {role_a["meta"].get("b_layout", "col"), role_b["meta"].get("b_layout", "col")}
        if len(layouts) != 1 or role_a["meta"].get("acc") != acc or role_b["meta"].get("acc") != acc:
            raise ValueError(f"an A/B's two roles measure one layout of an {acc} table, got {layouts}, "
                             f"{role_a['meta'].get('acc')} / {role_b['meta'].get('acc')}")
        layout = layouts.pop()
        for role, timing in (("graph", "kernel"), ("eager", "call")):
            slower[role] |= {(*map(int, mnk.split("_")), layout)
                             for mnk in base_faster(role_a, role_b, margin, timing)}
    out, reverted = [], {"graph": 0, "eager": 0}
    for entry in entries:
        key = (entry["m"], entry["n"], entry["k"], entry["b_layout"])
        was, measured = base_entries.get(key), cand_entries.get(key)
        picks = {}
        for role in ("graph", "eager") if was is not None and measured is not None else ():
            if (key in slower[role] and choice(entry, role) == choice(measured, role)
                    and choice(was, role) != choice(measured, role)):
                source = was.get("graph", was) if role == "graph" else was
                picks[role] = dict(choice(was, role), us=source["us"])
                reverted[role] += 1
        out.append(with_picks(entry, acc, picks))
    return out, reverted


def main(argv=None) -> int:
    import argparse

    from tuner.tables import layout_totals, read_table, write_table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", required=True, help="the table to correct")
    p.add_argument("--base", required=True, help="the table the A/B's candidate replaced (.json/.gz)")
    p.add_argument("--candidate", required=True, help="the table the A/B measured as the candidate (.json/.gz)")
    p.add_argument("--ab", required=True, action="append", metavar="ROLE_A,ROLE_B",
                   help="the two roles' results.json(.gz) of one layout's A/B")
    p.add_argument("--margin", type=float, default=MARGIN)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    table = read_table(args.table)
    acc = table["meta"]["acc"]
    runs = []
    for spec in args.ab:
        try:
            a_path, b_path = spec.split(",")
        except ValueError:
            p.error(f"--ab wants ROLE_A,ROLE_B, got {spec!r}")
        runs.append((read_json(a_path), read_json(b_path)))
    try:
        entries, count = revert(table["entries"], acc, read_json(args.base), read_json(args.candidate), runs,
                                args.margin)
    except ValueError as error:
        p.error(str(error))
    # keyed by the candidate measured, so that rebuilding a table (which keeps the meta it had) records each A/B once
    # and the table's own totals after it, as tuner.confirm states them (an eager revert may bring back an fp16 table's
    # fp32-accumulating choice, or split an entry's eager and graph choices)
    totals = {layout: layout_totals(entries, layout) for layout in ("col", "row")}
    record = {"layouts": len(runs), "margin": args.margin, **count, "totals": totals}
    name = record_name(args.candidate)
    meta = {key: value for key, value in table["meta"].items() if key != "ab_reverted"}  # this step's record last
    meta["ab_reverted"] = {**table["meta"].get("ab_reverted", {}), name: record}
    write_table(args.out, meta, entries)
    print(json.dumps({"table": args.out, "reverted": count}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
