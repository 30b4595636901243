"""Which kernels run, and for how long, when torch.matmul gets B row-major (cuBLAS NN, what the col grid's
torch.matmul baseline runs) against B column-major (torch through a transposed view, and our GemmEx TN arm), on the
skinny memory-bound f32 col shapes where ours trails torch.matmul by 3-5% (session 24's col grid).

    python benchmarks/h200-2026-12-04-s27/nn_vs_tn_kernels.py OUT.json

Kernel names, grids and device durations from torch.profiler (CUPTI); 3 operand copies rotated, 30 calls each.
Correctness first: each form against an fp64 reference on the first copy."""
import json
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from kernels.cublas import CublasArm

SHAPES = [(128, 8192, 4096), (64, 16384, 16384), (256, 4096, 4096), (128, 2048, 16384), (8192, 128, 16384)]
COPIES, CALLS = 3, 30


def forms(arm):
    return {
        "torch NN (B row-major)": lambda a, b_row, b_col, out: torch.matmul(a, b_row, out=out),
        "torch TN (B col-major, .t() view)": lambda a, b_row, b_col, out: torch.matmul(a, b_col.t(), out=out),
        "GemmEx TN arm": lambda a, b_row, b_col, out: arm(a, b_col, out, b_layout="col", acc="f32"),
        "GemmEx NN arm": lambda a, b_row, b_col, out: arm(a, b_row, out, b_layout="row", acc="f32"),
    }


def main(path):
    arm = CublasArm("gemmex")
    report = []
    for m, n, k in SHAPES:
        sets = []
        for _ in range(COPIES):
            a = torch.randn(m, k, device="cuda", dtype=torch.float16)
            b_col = torch.randn(n, k, device="cuda", dtype=torch.float16)
            sets.append((a, b_col.t().contiguous(), b_col, torch.empty(m, n, device="cuda", dtype=torch.float16)))
        a, b_row, b_col, out = sets[0]
        ref = a.double() @ b_row.double()
        for name, fn in forms(arm).items():
            out.fill_(float("nan"))
            fn(a, b_row, b_col, out)
            torch.cuda.synchronize()
            err = ((out.double() - ref).norm() / ref.norm()).item()
            for i in range(10):
                fn(*sets[i % COPIES])
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for i in range(CALLS):
                    fn(*sets[i % COPIES])
                torch.cuda.synchronize()
            kernels = {}
            for ev in prof.events():
                if ev.device_type.name == "CUDA" and ev.device_time > 0:
                    kernels.setdefault(ev.name, []).append(ev.device_time)
            row = {"shape": f"{m}_{n}_{k}", "form": name, "rel_err": err,
                   "kernels": {kn: {"calls": len(v), "median_us": round(statistics.median(v), 2)}
                               for kn, v in kernels.items()}}
            report.append(row)
            print(row["shape"], name, f"err {err:.1e}",
                  "; ".join(f"{kn[:110]} x{d['calls']} {d['median_us']} us" for kn, d in row["kernels"].items()))
    json.dump(report, open(path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
