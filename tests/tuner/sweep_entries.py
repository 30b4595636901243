"""Table entries and sm90 cluster variants for the sweep tests (tuner.skinny_sweep, tuner.set_sweep)."""
from kernels.config import KernelConfig

KNOBS = {"raster": 0, "swizzle": 0, "splits": 0}
CUBLAS_TN = {"kernel": "cublas", "config": {"kind": "gemmex_tn"}, "runtime": KNOBS}


def cfg(tile, cluster, acc="f32", layout="col"):
    return KernelConfig("sm90", acc, layout, tile, cluster=cluster, schedule="pingpong", scheduler="persistent",
                        pdl=True)


def entry(m, n, k, arm=CUBLAS_TN, layout="col"):
    return {"m": m, "n": n, "k": k, "b_layout": layout, **arm, "us": 10.0, "cublas_us": 10.0}
