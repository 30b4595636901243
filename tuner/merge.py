"""Tables from more than one tuning run, and f16 tables that run f32-accumulating kernels where those are faster.

Runs: each tuning run measures a shape's arms against cuBLAS *in that run*; runs differ by a few % (power state, the
other GPU), so a later run's trial times are rescaled by the ratio of the two runs' cuBLAS times before they compete
with the first run's. The merged record is what `Objective.choose` would have seen had one run tried every arm.
Why: a search with a fixed budget explores differently each time (session 3's wider variant set spent the trials of
the biggest f32 shapes on sm90 variants and missed the cuBLASLt algorithm session 2 had found, 3-6% faster).

More precise accumulation: fp32 accumulation answers an fp16-accumulation request at least as accurately, and on the
H200 it was faster for 628 of the 1000 grid shapes (cuBLAS's fp16-compute kernels are the weaker ones). An f16 entry
takes the f32 table's choice when that is faster by `margin`: the two come from different jobs (another GPU, another
process), so only a clear gap counts; the benchmark then times the result against every baseline in one run.
"""
from __future__ import annotations

from tuner.grid_report import family
from tuner.objective import Objective


def merge_runs(runs: list[list[dict]]) -> list[dict]:
    """One record per shape from records of several runs (the first run's shapes and cuBLAS time are the base)."""
    merged: dict[str, dict] = {}
    for index, records in enumerate(runs):
        for record in records:
            base = merged.get(record["mnk"])
            if base is None:
                if index == 0:
                    merged[record["mnk"]] = {**record, "trials": [dict(t, run=0) for t in record["trials"]]}
                continue
            scale = base["cublas_us"] / record["cublas_us"]
            for t in record["trials"]:
                if t.get("us") and not t.get("error"):
                    us = t["us"] * scale
                    base["trials"].append(dict(t, us=us, speedup=base["cublas_us"] / us, run=index))
                else:
                    base["trials"].append(dict(t, run=index))
    for record in merged.values():
        valid = [t for t in record["trials"] if t.get("us") and not t.get("error") and t.get("speedup", 0) > 0]
        record["best"] = max(valid, key=lambda t: t["speedup"]) if valid else None
    return list(merged.values())


def borrow_more_precise(f16_entries: list[dict], f32_entries: list[dict], objective: Objective,
                        margin: float = 1.02, large: tuple[float, float] | None = None) -> tuple[list[dict], int]:
    """The f16 entries, each replaced by the f32 entry of its shape (marked "acc": "f32") when that costs `margin`
    times less under the objective; and how many were replaced. `large` = (flop, margin): shapes above `flop` use
    that margin instead, which may be below 1 (borrow unless the f16 choice is clearly faster): on the H200 the
    largest shapes' fp16-compute cuBLAS choices lost more speed from tuning to the benchmark's sustained load than
    the f32 ones did (docs/notes.md)."""
    if margin < 1:
        raise ValueError(f"margin must be >= 1, got {margin}")
    if large is not None and not 0 < large[1]:
        raise ValueError(f"the large-shape margin must be > 0, got {large[1]}")
    def cost(entry: dict) -> float:
        return objective.cost(entry["us"], family(entry["kernel"]))

    by_shape = {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in f32_entries}
    out, borrowed = [], 0
    for e16 in f16_entries:
        e32 = by_shape.get((e16["m"], e16["n"], e16["k"], e16["b_layout"]))
        wanted = large[1] if large is not None and 2.0 * e16["m"] * e16["n"] * e16["k"] > large[0] else margin
        if e32 is not None and cost(e32) * wanted <= cost(e16):
            out.append({**e32, "acc": "f32", "cublas_us": e16["cublas_us"]})  # speedups stay against f16's cuBLAS
            borrowed += 1
        else:
            out.append(e16)
    return out, borrowed
