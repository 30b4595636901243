"""Per call over torch.matmul, geomean by FLOP bucket, of ours in server_mode.sh's runs (OUT/offline, OUT/server),
beside CUDA-L2's published figures for the same shapes and mode where ../shared/anchors is (not on the GPU host).
The maths is tuner.summary's (`--published`); this prints the two lines server_mode.sh's rc.txt shows.

    PYTHONPATH=. python benchmarks/h200-2026-12-05-s35/per_call_vs_cudal2.py OUT [ANCHORS_DIR]
"""
import os
import sys

from tuner.results import read_json, read_long_csv
from tuner.shapes import BUCKETS
from tuner.summary import ALL, by_bucket, published_comparison, speedup_rows_from_long

COLUMNS = [name for name, _, _ in BUCKETS] + [ALL]


def line(name: str, cells: dict, key: str) -> str:
    return (f"    {name:26s} " + " / ".join(f"{cells[b][key]:.3f}" if b in cells else "nan" for b in COLUMNS)
            + f" ({cells[ALL]['n']} shapes)")


def main(out: str, anchors: str = "../shared/anchors") -> None:
    for mode in ("offline", "server"):
        path = next((p for p in (f"{out}/{mode}/results.json", f"{out}/{mode}/results.json.gz") if os.path.exists(p)),
                    None)
        if path is None:
            print(f"  {mode}: no results")
            continue
        rows = speedup_rows_from_long(read_long_csv(path))
        print(f"  {mode}: per call over torch.matmul, geomean {' / '.join(COLUMNS[:-1])} / all")
        gpu = read_json(path)["meta"].get("gpu", "?").removeprefix("NVIDIA ")   # the card it ran on (session 38: H100)
        print(line(f"ours ({gpu})", by_bucket(rows)["call"]["torch.matmul"], "geomean"))
        published = f"{anchors}/cudal2_published_h100_{mode}.csv"
        if os.path.exists(published):
            print(line("CUDA-L2 published (H100)", published_comparison(rows, published)["torch.matmul"], "published"))
        else:
            print(f"    (CUDA-L2's published figures: {published} is not here)")


if __name__ == "__main__":
    main(*sys.argv[1:])
