"""Per call over torch.matmul, geomean by FLOP bucket, of ours in server_mode.sh's runs (OUT/offline, OUT/server),
beside CUDA-L2's published figures for the same shapes and mode where ../shared/anchors is (not on the GPU host).

    PYTHONPATH=. python benchmarks/h200-2026-12-05-s35/per_call_vs_cudal2.py OUT [ANCHORS_DIR]
"""
import csv
import math
import os
import sys

from tuner.results import read_json

BUCKETS = ("<1e9", "1e9-1e11", ">1e11")


def bucket(mnk: str) -> str:
    m, n, k = map(int, mnk.split("_"))
    flop = 2 * m * n * k
    return "<1e9" if flop < 1e9 else "1e9-1e11" if flop <= 1e11 else ">1e11"


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def ours_per_call(path: str) -> dict[str, float]:
    out = {}
    for shape in read_json(path)["shapes"]:
        c = shape["competitors"]
        o, t = c.get("ours") or {}, c.get("torch.matmul") or {}
        if o.get("ok") and t.get("ok") and o.get("call_us") and t.get("call_us"):
            out[shape["mnk"]] = t["call_us"] / o["call_us"]
    return out


def line(name: str, table: dict[str, float]) -> str:
    parts = [geomean(v for k, v in table.items() if bucket(k) == b) for b in BUCKETS]
    return (f"    {name:26s} " + " / ".join(f"{p:.3f}" for p in parts) + f" / {geomean(table.values()):.3f}"
            f" ({len(table)} shapes)")


def main(out: str, anchors: str = "../shared/anchors") -> None:
    for mode in ("offline", "server"):
        path = next((p for p in (f"{out}/{mode}/results.json", f"{out}/{mode}/results.json.gz") if os.path.exists(p)),
                    None)
        if path is None:
            print(f"  {mode}: no results")
            continue
        ours = ours_per_call(path)
        print(f"  {mode}: per call over torch.matmul, geomean {' / '.join(BUCKETS)} / all")
        print(line("ours (H200)", ours))
        published = f"{anchors}/cudal2_published_h100_{mode}.csv"
        if os.path.exists(published):
            theirs = {r["mnk"]: float(r["torch.matmul"]) for r in csv.DictReader(open(published))}
            print(line("CUDA-L2 published (H100)", {k: v for k, v in theirs.items() if k in ours}))
        else:
            print(f"    (CUDA-L2's published figures: {published} is not here)")


if __name__ == "__main__":
    main(*sys.argv[1:])
