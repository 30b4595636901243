"""The identity of each tuned cuBLASLt algorithm: which algorithm a table's `algo_index` named where it was tuned.

A `cublaslt` entry runs algorithm i of this process's heuristic list for the shape. On the card and cuBLAS it was
tuned with, that is the algorithm the tuner timed; elsewhere the list may rank another one there (session 38: on an
H100, 73 of the 87 graph choices its own grids corrected were the H200's cuBLASLt ranks). An entry that carries the
algorithm's identity (config "algo": kernels.tuned_tables.LT_IDENTITY) runs that algorithm wherever the list ranks
it, and falls back to cuBLAS where the list lacks it (kernels.dispatch). Two steps:

    python -m tuner.lt_identity record --tables kernels/tables --out ids.json   # on the GPU the tables were tuned on
    python -m tuner.lt_identity stamp --table T.json --record ids.json --out T.json   # anywhere

`record` reads, for every cuBLASLt choice of the tables (eager and graph, with the accumulator it runs), the identity
at its index in this process's list (the same top-32 list, 256-byte aligned operands, the dispatcher asks for);
`stamp` writes them into a table's entries. `tuner.tune --env gpu` stamps the entries it writes itself.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

LT = "cublaslt"


def _choices(entry: dict, table_acc: str):
    """(role, choice dict, the accumulator it runs with) for each cuBLASLt lt_algo choice of an entry."""
    for role, choice in (("eager", entry), ("graph", entry.get("graph"))):
        if choice and choice.get("kernel") == LT and "algo_index" in (choice.get("config") or {}) \
                and (choice["config"].get("kind", "lt_algo") == "lt_algo"):
            yield role, choice, choice.get("acc") or table_acc


def _key(entry: dict, acc: str, index: int) -> str:
    return f"{entry['m']}_{entry['n']}_{entry['k']}/{entry['b_layout']}/{acc}/{index}"


def identities(entries: list[dict], table_acc: str, listed) -> dict[str, dict]:
    """{m_n_k/b_layout/acc/index: identity} of every cuBLASLt choice; listed(m, n, k, b_layout, acc) -> the list's
    identities in order. An index past the list's end is left out (the dispatcher refuses it anyway)."""
    out: dict[str, dict] = {}
    for entry in entries:
        for _, choice, acc in _choices(entry, table_acc):
            index = int(choice["config"]["algo_index"])
            key = _key(entry, acc, index)
            if key not in out:
                found = listed(entry["m"], entry["n"], entry["k"], entry["b_layout"], acc)
                if index < len(found):
                    out[key] = dict(found[index])
    return out


def stamp(entries: list[dict], table_acc: str, record: dict[str, dict]) -> tuple[list[dict], int]:
    """The entries with each cuBLASLt choice's identity from `record` (choices it lacks stay as they are); and how
    many choices it stamped."""
    out, stamped = [], 0
    for entry in entries:
        entry = json.loads(json.dumps(entry))   # a deep copy
        for _, choice, acc in _choices(entry, table_acc):
            identity = record.get(_key(entry, acc, int(choice["config"]["algo_index"])))
            if identity is not None:
                choice["config"] = {**choice["config"], "algo": identity}
                stamped += 1
        out.append(entry)
    return out, stamped


def main(argv=None) -> int:
    from tuner.results import read_json
    from tuner.tables import read_table, write_table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="on a GPU: the identities of the tables' cuBLASLt choices")
    rec.add_argument("--tables", type=Path, default=Path("kernels/tables"))
    rec.add_argument("--out", type=Path, required=True)
    st = sub.add_parser("stamp", help="write a record's identities into a table")
    st.add_argument("--table", required=True)
    st.add_argument("--record", required=True)
    st.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if args.command == "record":
        from kernels.dispatch import lt_identities_of
        from tuner import env_info

        listed, ids = lt_identities_of(), {}
        for path in sorted(args.tables.glob("sm*_f*.json")):
            table = read_json(path)
            ids.update(identities(table["entries"], table["meta"]["acc"], listed))
        meta = {k: v for k, v in env_info.collect().items() if k in ("gpu", "driver", "cuda", "torch", "date",
                                                                      "commit")}
        args.out.write_text(json.dumps({"meta": meta, "identities": dict(sorted(ids.items()))}, indent=1) + "\n")
        print(json.dumps({"record": str(args.out), "choices": len(ids), **meta}))
        return 0
    table, record = read_table(args.table), read_json(args.record)
    entries, stamped = stamp(table["entries"], table["meta"]["acc"], record["identities"])
    # last in the meta whatever the table had (a rebuild keeps the committed meta, stamp included): byte-stable
    meta = {k: v for k, v in table["meta"].items() if k != "lt_identities"}
    meta["lt_identities"] = {"gpu": record["meta"].get("gpu", ""), "stamped": stamped}
    write_table(args.out, meta, entries)
    print(json.dumps({"table": args.out, "stamped": stamped}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
