"""Benchmark records: per shape, per competitor, both timings; speedups of ours over each baseline; JSON + CSV files
and the printed table. Plain data in, plain files out (no GPU needed)."""
from __future__ import annotations

import contextlib
import csv
import gzip
import json
import math
import os
import signal
import threading
from pathlib import Path

from tuner.competitors import BASELINES, MAX_OF, OURS
from tuner.shapes import Shape, bucket_of, tflops
from tuner.timing import TIMINGS

LONG_FIELDS = ("mnk", "m", "n", "k", "flop", "bucket", "competitor", "ok", "reason", "rel_err", "zero_one_err",
               "kernel_us", "call_us", "kernel_tflops", "call_tflops", "speedup_kernel", "speedup_call")
SPEEDUP_COLUMNS = ("torch.matmul", "cuBLAS-tn", "cuBLAS-nn", "cuBLAS-max", "cuBLASLt-heuristic-tn",
                   "cuBLASLt-heuristic-nn", "cuBLASLt-heuristic-max", "cuBLASLt-auto-tuning-tn",
                   "cuBLASLt-auto-tuning-nn", "cuBLASLt-auto-tuning-max")  # CUDA-L2's column order


def competitor_record(shape: Shape, check, medians: dict[str, float | None], info: dict | None = None) -> dict:
    rec = {"ok": check.ok, "reason": check.reason, "rel_err": check.rel_err, "zero_one_err": check.zero_one_err,
           "info": info or {}}
    for timing in TIMINGS:
        us = medians.get(timing)
        rec[f"{timing}_us"] = us
        rec[f"{timing}_tflops"] = tflops(shape, us) if us else None
    return rec


def graph_timed(record: dict) -> bool:
    """Whether a competitor record's kernel-only figure came from a CUDA-graph replay, as every competitor's should:
    one timed by events after a failed capture (tuner.timing.GraphSampler) carries launch gaps (session 25's `ours`
    beside cuBLASLt autotuning). Records before session 25 do not say; they were graph-timed."""
    return (record.get("info") or {}).get("kernel_method", "graph") == "graph"


def speedups(competitors: dict[str, dict], timing: str, ours: str = OURS) -> dict[str, float]:
    """ours' speedup over every timed baseline (baseline µs / ours µs), plus CUDA-L2's '-max' columns: the smaller
    speedup of the TN/NN pair, i.e. against the stronger of the two."""
    mine = competitors.get(ours, {}).get(f"{timing}_us")
    if not mine:
        return {}
    out = {}
    for name, rec in competitors.items():
        theirs = rec.get(f"{timing}_us")
        if name != ours and not name.startswith(f"{OURS}:") and theirs:
            out[name] = theirs / mine
    for name, pair in MAX_OF.items():
        present = [out[p] for p in pair if p in out]
        if present:
            out[name] = min(present)
    return out


def shape_record(shape: Shape, competitors: dict[str, dict]) -> dict:
    return {"mnk": shape.mnk, "m": shape.m, "n": shape.n, "k": shape.k, "flop": shape.flop,
            "bucket": bucket_of(shape.flop), "competitors": competitors,
            "speedup": {t: speedups(competitors, t) for t in TIMINGS}}


def long_rows(records: list[dict]) -> list[dict]:
    rows = []
    for rec in records:
        for name, comp in rec["competitors"].items():
            row = {f: rec[f] for f in ("mnk", "m", "n", "k", "flop", "bucket")}
            row.update({f: comp.get(f) for f in LONG_FIELDS if f in comp})
            row["competitor"] = name
            for t in TIMINGS:
                row[f"speedup_{t}"] = rec["speedup"][t].get(name, 1.0 if name == OURS else None)
            rows.append(row)
    return rows


def write_results(base_dir: str | Path, records: list[dict], meta: dict) -> dict[str, Path]:
    """results.json (everything), results.csv (long: one row per shape × competitor), speedup_<timing>.csv (wide,
    CUDA-L2's columns: ours' speedup over each baseline). A run stopped while writing (a deadline's SIGINT, Ctrl-C)
    leaves the files of this write or of the one before, never a cut file or a CSV behind its JSON (session 21: a
    deadline cut results.csv at 150 of 890 shapes): each file goes to a temporary name first and is renamed, with the
    interrupt held until all are in place."""
    base = Path(base_dir)
    base.mkdir(parents=True, exist_ok=True)
    paths = {"json": base / "results.json", "csv": base / "results.csv",
             **{f"speedup_{t}": base / f"speedup_{t}.csv" for t in TIMINGS}}
    with _interrupt_held():
        _write_atomically(paths["json"], lambda f: f.write(json.dumps({"meta": meta, "shapes": records}, indent=1,
                                                                      default=str)))
        _write_atomically(paths["csv"], lambda f: _write_csv(f, LONG_FIELDS, long_rows(records)))
        for t in TIMINGS:
            rows = [{"mnk": r["mnk"], **{c: _fmt(r["speedup"][t].get(c)) for c in SPEEDUP_COLUMNS}} for r in records]
            _write_atomically(paths[f"speedup_{t}"],
                              lambda f, rows=rows: _write_csv(f, ("mnk",) + SPEEDUP_COLUMNS, rows))
    return paths


@contextlib.contextmanager
def _interrupt_held():
    """SIGINT arriving inside the block is raised (as KeyboardInterrupt) when it ends; off the main thread, where
    Python delivers no signals, a plain block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _write_atomically(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        write(f)
    os.replace(tmp, path)


def read_json(path: str | Path) -> dict:
    """A results.json, a table or a saved model, plain or gzipped (`.gz`: how large ones are committed)."""
    path = Path(path)
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as f:
        return json.load(f)


def read_long_csv(path: str | Path) -> list[dict]:
    """A results.csv, plain or gzipped (`.gz`: how grid runs are committed); given the run's results.json(.gz)
    instead, the same rows as the CSV holds them (strings, "" for none)."""
    path = Path(path)
    if path.name.endswith((".json", ".json.gz")):
        return [{f: "" if row.get(f) is None else str(row[f]) for f in LONG_FIELDS}
                for row in long_rows(read_json(path)["shapes"])]
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def _fmt(x):
    return "" if x is None else f"{x:.4f}"


def _write_csv(f, fields, rows) -> None:
    w = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
    w.writeheader()
    for row in rows:
        w.writerow({k: ("" if v is None else v) for k, v in row.items()})


def format_table(rec: dict) -> str:
    """One shape: µs and TFLOP/s per competitor and timing, and ours' speedup over it."""
    head = f"{'competitor':<28}{'ok':>4}{'kernel µs':>11}{'TFLOP/s':>9}{'x':>7}{'call µs':>10}{'TFLOP/s':>9}{'x':>7}"
    lines = [f"== {rec['mnk']}  ({rec['flop']:.3g} FLOP, bucket {rec['bucket']})", head]
    for name, c in rec["competitors"].items():
        cells = [f"{name:<28}", f"{'yes' if c['ok'] else 'NO':>4}"]
        for t in TIMINGS:
            sp = rec["speedup"][t].get(name)
            cells += [_cell(c.get(f"{t}_us"), 11, ".2f"), _cell(c.get(f"{t}_tflops"), 9, ".1f"), _cell(sp, 7, ".3f")]
        lines.append("".join(cells) + ("" if c["ok"] else f"  ({c['reason']})"))
    for name in MAX_OF:
        k, c = rec["speedup"]["kernel"].get(name), rec["speedup"]["call"].get(name)
        if k or c:
            lines.append(f"{name:<32}{'':>20}{_cell(k, 7, '.3f')}{'':>19}{_cell(c, 7, '.3f')}")
    return "\n".join(lines)


def _cell(x, width, spec) -> str:
    return f"{'-':>{width}}" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:>{width}{spec}}"


__all__ = ["BASELINES", "competitor_record", "shape_record", "speedups", "write_results", "read_long_csv",
           "format_table", "long_rows"]
