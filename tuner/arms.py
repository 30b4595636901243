"""An arm of the search = one compiled variant (KernelConfig) + its runtime knobs (raster, swizzle, splits), or one
cuBLASLt algorithm of the shape's heuristic list (`algo` = its rank; family "cublaslt", nothing to compile: see
tuner/lt_arms.py).

Arms carry their factors as plain data (family, tile, cluster, schedule, scheduler, stages, alignment, pdl,
l2_prefetch, l2_prefetch_kb + knobs) so that the agent, the features and the synthetic environment never need the
kernel library; `from_kernel_space` builds them from `kernels.space` when it is importable."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

FACTORS = ("family", "tile_m", "tile_n", "tile_k", "cluster", "schedule", "scheduler", "stages", "alignment", "pdl",
           "l2_prefetch", "l2_prefetch_kb", "algo")
LATER_FACTORS = ("pdl", "l2_prefetch", "l2_prefetch_kb")  # twins' factors: features and records skip them when unused
KNOBS = ("raster", "swizzle", "splits")


@dataclass(frozen=True)
class Arm:
    config: str  # KernelConfig.name (what gets compiled)
    family: str
    tile_m: int
    tile_n: int
    tile_k: int
    cluster: str = "1x1"  # "CMxCN"
    schedule: str = ""
    scheduler: str = ""
    stages: int = 0
    alignment: int = 8
    raster: int = 0
    swizzle: int = 0
    splits: int = 0
    algo: int = -1  # cuBLASLt arms: rank in the shape's heuristic list; -1 for built variants
    pdl: bool = False  # programmatic dependent launch (kernels/config.py): the same tile, another launch behaviour
    l2_prefetch: bool = False  # a pdl variant's twin that prefetches its first tile into L2 before its wait
    l2_prefetch_kb: int = 0  # that prefetch capped at this many KB per CTA (0: the pipeline's depth)

    @property
    def name(self) -> str:
        if self.algo >= 0:
            return f"{self.config}/a{self.algo}"
        return f"{self.config}/r{self.raster}w{self.swizzle}s{self.splits}"

    @property
    def cluster_size(self) -> int:
        cm, cn = (int(x) for x in self.cluster.split("x"))
        return cm * cn

    @property
    def knobs(self) -> dict:
        return {"raster": self.raster, "swizzle": self.swizzle, "splits": self.splits}

    def factor(self, name: str):
        return getattr(self, name)

    def supports(self, m: int, n: int, k: int) -> bool:
        """The kernel library's packed-operand rule: K and N multiples of the access width."""
        return k % self.alignment == 0 and n % self.alignment == 0

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in ("config",) + FACTORS + KNOBS}
        for f in ("l2_prefetch", "l2_prefetch_kb"):
            if not d[f]:
                del d[f]  # the factors came later: records written before them stay byte-identical
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Arm":
        return cls(**{k: d[k] for k in ("config",) + FACTORS + KNOBS if k in d})


def from_config(cfg, knobs: dict[str, tuple[int, ...]]) -> list[Arm]:
    """All arms of one KernelConfig: the product of its runtime knob values."""
    base = dict(config=cfg.name, family=cfg.family, tile_m=cfg.tile[0], tile_n=cfg.tile[1], tile_k=cfg.tile[2],
                cluster=f"{cfg.cluster[0]}x{cfg.cluster[1]}", schedule=cfg.schedule, scheduler=cfg.scheduler,
                stages=cfg.stages, alignment=cfg.alignment, pdl=cfg.pdl, l2_prefetch=cfg.l2_prefetch,
                l2_prefetch_kb=cfg.l2_prefetch_kb)
    return [Arm(**base, raster=r, swizzle=w, splits=s)
            for r, w, s in itertools.product(knobs["raster"], knobs["swizzle"], knobs["splits"])]


def from_kernel_space(acc: str, b_layout: str, variant_set: str | None = None, arch: str | None = None):
    """(arms, configs by name) from the kernel library: named variant sets ("splitk_cluster,splitk_cluster_wide"), or
    the whole enumerated space."""
    from kernels import space

    if variant_set:
        configs = [c for c in space.variant_sets(variant_set) if c.acc == acc and c.b_layout == b_layout]
    else:
        configs = space.enumerate(arch=arch, acc=acc, b_layout=b_layout)
    arms = [arm for cfg in configs for arm in from_config(cfg, space.runtime_knobs(cfg))]
    return arms, {c.name: c for c in configs}
