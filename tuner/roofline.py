"""How close each timed GEMM came to what the GPU can do at all: the roofline of its datasheet peaks.

A GEMM of M x N x K in fp16 (fp16 out) does 2MNK FLOP and must move at least 2(MK + KN + MN) bytes through HBM
(operands rotated beyond L2, as the benchmark does); no kernel can beat max(FLOP / peak FLOP/s, bytes / peak B/s).
`share` = that bound / the measured time (1.0: on the roofline). It says where a speedup over cuBLAS is still to be
had and where it is not: compute-bound shapes sit under the power limit (the H200 sustains ~710 TFLOP/s back to back
on 4096^3 against its 989 peak, docs/notes.md), memory-bound ones under the HBM peak.

Peaks are the datasheet's dense fp16 tensor-core rate and HBM bandwidth, by GPU name (`--peak_tflops` /
`--peak_tbps` of tuner.summary for others)."""
from __future__ import annotations

from dataclasses import dataclass

from tuner.shapes import BUCKETS, bucket_of
from tuner.summary import geomean


@dataclass(frozen=True)
class Roofline:
    flops: float  # dense fp16 tensor-core FLOP/s
    bytes_per_s: float  # HBM bandwidth

    @property
    def ridge(self) -> float:
        """FLOP per byte above which a GEMM is compute-bound."""
        return self.flops / self.bytes_per_s

    def bound_us(self, m: int, n: int, k: int) -> float:
        return max(2.0 * m * n * k / self.flops, min_bytes(m, n, k) / self.bytes_per_s) * 1e6

    def describe(self) -> str:
        return f"{self.flops / 1e12:.0f} TFLOP/s, {self.bytes_per_s / 1e12:.2f} TB/s"


# datasheet peaks (dense fp16 tensor core, HBM), matched in order against the device name
PEAKS = (("H200", Roofline(989.4e12, 4.8e12)), ("H100 PCIe", Roofline(756.0e12, 2.0e12)),
         ("H100", Roofline(989.4e12, 3.35e12)), ("A100", Roofline(312.0e12, 2.039e12)))


def for_gpu(name: str | None) -> Roofline | None:
    for key, roof in PEAKS:
        if name and key in name:
            return roof
    return None


def min_bytes(m: int, n: int, k: int) -> float:
    return 2.0 * (m * k + k * n + m * n)


def intensity(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k / min_bytes(m, n, k)


def shares(long_rows: list[dict], roof: Roofline, timing: str = "kernel") -> list[dict]:
    """One row per (shape, competitor) timed: intensity, TFLOP/s, TB/s and share of the roofline."""
    out = []
    for r in long_rows:
        us = r.get(f"{timing}_us")
        if str(r.get("ok")) != "True" or us in (None, ""):
            continue
        m, n, k, us = int(r["m"]), int(r["n"]), int(r["k"]), float(us)
        out.append({"mnk": r["mnk"], "competitor": r["competitor"], "flop": 2.0 * m * n * k,
                    "intensity": intensity(m, n, k), "tflops": 2.0 * m * n * k / us / 1e6,
                    "tbps": min_bytes(m, n, k) / us / 1e6, "bound_us": roof.bound_us(m, n, k),
                    "share": roof.bound_us(m, n, k) / us,
                    "memory_bound": intensity(m, n, k) < roof.ridge})
    return out


HEADROOM_MIN_BOUND_US = 10.0  # below this a kernel's launch and ramp, not the roofline, limit it


def summarize(rows: list[dict], competitors=("ours", "torch.matmul"), headroom: int = 8) -> dict:
    """Per competitor: geomean share by size bucket and by bound (memory / compute); for ours, the shapes furthest
    below the roofline among those it bounds at >= HEADROOM_MIN_BOUND_US."""
    table = {}
    for name in competitors:
        mine = [r for r in rows if r["competitor"] == name]
        if not mine:
            continue
        groups = {"all": mine, "memory-bound": [r for r in mine if r["memory_bound"]],
                  "compute-bound": [r for r in mine if not r["memory_bound"]]}
        groups.update({f"FLOP {b}": [r for r in mine if bucket_of(r["flop"]) == b] for b, _, _ in BUCKETS})
        table[name] = {key: {"shapes": len(group), "share": geomean([r["share"] for r in group])}
                       for key, group in groups.items() if group}
    ours = sorted((r for r in rows if r["competitor"] == "ours" and r["bound_us"] >= HEADROOM_MIN_BOUND_US),
                  key=lambda r: r["share"])
    return {"by_competitor": table,
            "headroom": [{k: r[k] for k in ("mnk", "share", "tflops", "tbps", "memory_bound")}
                         for r in ours[:headroom]]}


def format_summary(summary: dict, roof: Roofline) -> str:
    lines = [f"roofline share (kernel-only time against max(FLOP, bytes) at {roof.describe()}; 1.0 = on the roof)"]
    for name, groups in summary["by_competitor"].items():
        cells = ", ".join(f"{key} {g['share']:.3f} ({g['shapes']})" for key, g in groups.items())
        lines.append(f"  {name}: {cells}")
    if summary["headroom"]:
        lines.append(f"  ours furthest below it (shapes it bounds at >= {HEADROOM_MIN_BOUND_US:g} µs): " + ", ".join(
            f"{r['mnk']} {r['share']:.2f} ({r['tbps']:.2f} TB/s)" if r["memory_bound"]
            else f"{r['mnk']} {r['share']:.2f} ({r['tflops']:.0f} TFLOP/s)" for r in summary["headroom"]))
    return "\n".join(lines)


def plot(rows: list[dict], roof: Roofline, path, title: str = "") -> None:
    """TFLOP/s against arithmetic intensity, log-log, under the roofline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    names = sorted({r["competitor"] for r in rows})
    shown = [n for n in ("ours", "torch.matmul") if n in names] or names  # the baselines overlap torch.matmul
    for j, name in enumerate(shown):
        pts = [(r["intensity"], r["tflops"]) for r in rows if r["competitor"] == name]
        ax.scatter(*zip(*pts), s=9, label=name, color=plt.cm.tab10(j % 10), marker="*" if name == "ours" else "o",
                   alpha=0.8)
    lo, hi = min(r["intensity"] for r in rows) / 1.5, max(r["intensity"] for r in rows) * 1.5
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(roof.flops, x * roof.bytes_per_s) / 1e12 for x in xs], color="k", lw=1.2,
            label=f"roofline ({roof.describe()})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of A, B and C)")
    ax.set_ylabel("TFLOP/s (kernel-only)")
    ax.set_title(title or "kernel-only TFLOP/s under the roofline")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
