"""Tuned tables (architecture.md, Contract 3): `kernels/tables/<arch>_<acc>.json`, written by the tuner, read by the
dispatcher. One entry per (m, n, k, b_layout): the winning variant (or "cublas" when nothing beat it), its config
(KernelConfig.to_dict()), its runtime knobs, its µs and cuBLAS's µs."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

ENTRY_KEYS = ("m", "n", "k", "b_layout", "kernel", "config", "runtime", "us", "cublas_us")
META_KEYS = ("gpu", "arch", "acc", "date", "commit", "driver", "cuda", "torch")
CUBLAS = "cublas"


def table_path(tables_dir: str | Path, arch: str, acc: str) -> Path:
    return Path(tables_dir) / f"{arch}_{acc}.json"


def entry(m: int, n: int, k: int, b_layout: str, kernel: str, config: dict, runtime: dict, us: float,
          cublas_us: float) -> dict:
    return {"m": int(m), "n": int(n), "k": int(k), "b_layout": b_layout, "kernel": kernel, "config": config,
            "runtime": {"raster": int(runtime.get("raster", 0)), "swizzle": int(runtime.get("swizzle", 0)),
                        "splits": int(runtime.get("splits", 0))}, "us": float(us), "cublas_us": float(cublas_us)}


def validate(table: dict) -> list[str]:
    problems = []
    missing = [k for k in META_KEYS if k not in table.get("meta", {})]
    if missing:
        problems.append(f"meta lacks {missing}")
    seen = set()
    for i, e in enumerate(table.get("entries", [])):
        lacking = [k for k in ENTRY_KEYS if k not in e]
        if lacking:
            problems.append(f"entry {i} lacks {lacking}")
            continue
        key = (e["m"], e["n"], e["k"], e["b_layout"])
        if key in seen:
            problems.append(f"entry {i} duplicates {key}")
        seen.add(key)
        if e["b_layout"] not in ("row", "col"):
            problems.append(f"entry {i}: b_layout {e['b_layout']!r}")
        if e["kernel"] in (CUBLAS, "cublaslt") and any(e["runtime"].values()):
            problems.append(f"entry {i}: {e['kernel']} takes no runtime knobs")
        if not (e["us"] > 0 and e["cublas_us"] > 0):
            problems.append(f"entry {i}: times must be > 0")
        graph = e.get("graph")
        if graph is not None and not (isinstance(graph, dict) and set(graph) <= set(GRAPH_KEYS)
                                      and all(graph.get(k) is not None for k in ("kernel", "config", "us"))):
            problems.append(f"entry {i}: graph must hold kernel, config, us (and runtime, acc), got {graph!r}")
    return problems


GRAPH_KEYS = ("kernel", "config", "runtime", "us", "acc")  # an entry's choice for calls captured into a CUDA graph


def with_graph(entries: list[dict], graph_entries: list[dict]) -> tuple[list[dict], int]:
    """The entries, each with a "graph" choice taken from graph_entries (another objective's table of the same
    records) where that one differs: captured calls replay without launch cost, so for them the fastest kernel
    wins even where an eager call is better served by a cheaper launch (kernels/tuned_tables.py). And how many."""
    by_key = {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in graph_entries}
    out, count = [], 0
    for e in entries:
        g = by_key.get((e["m"], e["n"], e["k"], e["b_layout"]))
        if g is not None and any(e.get(f) != g.get(f) for f in ("kernel", "config", "runtime", "acc")):
            out.append({**e, "graph": {f: g[f] for f in GRAPH_KEYS if f in g}})
            count += 1
        else:
            out.append(e)
    return out, count


def layout_totals(entries: list[dict], b_layout: str) -> dict[str, int]:
    """A table's own totals over one B layout's entries, as each correction step states them in its meta record (the
    tests check the tables against the last step's): fp32-accumulating choices of an f16 table, graph choices."""
    mine = [e for e in entries if e["b_layout"] == b_layout]
    return {"borrowed_f32": sum(e.get("acc") == "f32" for e in mine),
            "graph_alternatives": sum("graph" in e for e in mine)}


def meta_key(name: str, b_layout: str) -> str:
    """A table meta record of one B layout's entries: "tuner" / "confirmed" describe the col entries (they predate
    the row ones), "tuner_row" / "confirmed_row" the row entries."""
    return name if b_layout == "col" else f"{name}_{b_layout}"


def write_table(path: str | Path, meta: dict, entries: list[dict]) -> Path:
    """Sorted entries, validated, written atomically (a reader never sees half a table)."""
    table = {"meta": {k: meta.get(k, "unknown") for k in META_KEYS} | {k: v for k, v in meta.items()
                                                                       if k not in META_KEYS},
             "entries": sorted(entries, key=lambda e: (e["b_layout"], e["m"], e["n"], e["k"]))}
    problems = validate(table)
    if problems:
        raise ValueError("invalid table: " + "; ".join(problems))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def read_table(path: str | Path) -> dict:
    table = json.loads(Path(path).read_text())
    problems = validate(table)
    if problems:
        raise ValueError(f"{path}: " + "; ".join(problems))
    return table


def merge_entries(old: list[dict], new: list[dict]) -> list[dict]:
    """New entries replace old ones of the same (m, n, k, b_layout)."""
    by_key = {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in old}
    by_key.update({(e["m"], e["n"], e["k"], e["b_layout"]): e for e in new})
    return list(by_key.values())
