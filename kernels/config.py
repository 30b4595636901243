"""KernelConfig: the single definition of one compiled HGEMM kernel variant (data only, no GPU, no CUTLASS).

Three families:
  sm90  CUTLASS 3.x collective kernel: TMA + wgmma, warp-specialized (cooperative / pingpong), clusters, persistent or
        stream-K tile scheduler. Built for sm_90a only. `pdl` variants launch with programmatic dependent launch
        (Hopper): the next kernel on the stream is scheduled while this one drains, and waits (griddepcontrol.wait,
        CUTLASS's GDC hooks) before its first global memory access; so back-to-back GEMMs overlap launch + prologue.
        `l2_prefetch` pdl variants also fetch their first tile's operands into L2 before that wait (`l2_prefetch_kb`:
        at most that many KB per CTA).
  sm80  CUTLASS 2.x GemmUniversal: mma.sync m16n8k16 + cp.async multistage, serial split-K. Built for sm_80 and sm_90.
  splitk  CUTLASS 3.x TMA + wgmma mainloop (KernelTma: one warpgroup, not warp-specialized) with our epilogue, for
        few output tiles and a long K: the K splits run as grid z and meet in an fp32 reduction in L2, finished by
        the last CTA of each tile, in one kernel (kernels/codegen/splitk.cu.tmpl). Built for sm_90a only.
        schedule "cluster": the splits of a tile are the CTAs of one thread block cluster instead, reduced on chip
        through distributed shared memory (our own TMA + wgmma pipeline, kernels/codegen/splitk_cluster.cu.tmpl).
        schedule "cooperative": the L2 reduction of "" on CUTLASS's warp-specialized cooperative mainloop (a producer
        warpgroup, two consumer warpgroups, persistent over tiles x splits) instead of KernelTma.
        `pdl` and `l2_prefetch` as for sm90 (no l2_prefetch twins of the cooperative ones yet).

Only compile-time choices live here. Runtime knobs (raster order, swizzle, splits) go into hgemm_args_t per call;
`kernels.space.runtime_knobs(cfg)` says which ones a variant honours.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

FAMILIES = ("sm90", "sm80", "splitk")
ACCUMULATORS = ("f32", "f16")
B_LAYOUTS = ("row", "col")
SCHEDULES = ("cooperative", "pingpong")  # sm90
# splitk: where the splits meet ("": in L2, "cluster": in distributed shared memory) and on which mainloop
# ("": KernelTma, one warpgroup; "cooperative": warp-specialized, two consumer warpgroups, reduced in L2 as "")
SPLITK_SCHEDULES = ("", "cluster", "cooperative")
SCHEDULERS = ("persistent", "streamk")  # sm90 only
L2_PROMOTIONS = (0, 256)  # sm90: 0 = CUTLASS's CU_TENSOR_MAP_L2_PROMOTION_L2_128B
ALIGNMENTS = (8, 4, 2)  # elements of fp16: 8 = 16 bytes (TMA needs it; sm90 is always 8)

_SCHEDULE_ABBR = {"cooperative": "coop", "pingpong": "pp", "cluster": "cl"}
_SCHEDULER_ABBR = {"persistent": "pers", "streamk": "sk"}


def _dims(values) -> str:
    return "x".join(str(v) for v in values)


@dataclass(frozen=True)
class KernelConfig:
    family: str  # "sm90" | "sm80" | "splitk"
    acc: str  # "f32" | "f16": accumulator (and epilogue compute) type
    b_layout: str  # "row": B is K×N row-major; "col": B is N×K row-major (x @ Wᵀ)
    tile: tuple[int, int, int]  # threadblock (CTA) tile M, N, K
    cluster: tuple[int, int] = (1, 1)  # sm90: CTAs per cluster along M, N (TMA multicast); splitk cluster: M-tiles
    warp: tuple[int, int, int] = (0, 0, 0)  # sm80: warp tile M, N, K
    stages: int = 0  # pipeline stages; sm90: 0 = as many as fit beside the epilogue (StageCountAutoCarveout)
    schedule: str = ""  # sm90: "cooperative" | "pingpong"; splitk: "" | "cluster"
    scheduler: str = ""  # sm90: "persistent" | "streamk"
    alignment: int = 8  # A/B/C access width in elements
    pdl: bool = False  # sm90, splitk: programmatic dependent launch (GDC hooks compiled in, launched with the attribute)
    l2_promotion: int = 0  # sm90: bytes its TMA loads promote to L2 per request (0: CUTLASS's 128; 256)
    l2_prefetch: bool = False  # sm90/splitk pdl: its first tile's operands go to L2 before it waits on the last grid
    l2_prefetch_kb: int = 0  # l2_prefetch: at most this many KB per CTA (whole k-tiles, >= 1); 0: pipeline depth

    def __post_init__(self):
        # Normalise lists (from JSON) to tuples so equal configs hash equal.
        for name in ("tile", "cluster", "warp"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(int(v) for v in value))
        problems = self.structural_problems()
        if problems:
            raise ValueError(f"invalid KernelConfig: {'; '.join(problems)}")

    def structural_problems(self) -> list[str]:
        """Field-level checks. Resource and hardware constraints live in kernels.space.problems()."""
        out = []
        if self.family not in FAMILIES:
            out.append(f"family {self.family!r} not in {FAMILIES}")
        if self.acc not in ACCUMULATORS:
            out.append(f"acc {self.acc!r} not in {ACCUMULATORS}")
        if self.b_layout not in B_LAYOUTS:
            out.append(f"b_layout {self.b_layout!r} not in {B_LAYOUTS}")
        if len(self.tile) != 3 or min(self.tile) <= 0:
            out.append(f"tile {self.tile} must be 3 positive ints")
        if len(self.cluster) != 2 or min(self.cluster) <= 0:
            out.append(f"cluster {self.cluster} must be 2 positive ints")
        if len(self.warp) != 3:
            out.append(f"warp {self.warp} must be 3 ints")
        if self.alignment not in ALIGNMENTS:
            out.append(f"alignment {self.alignment} not in {ALIGNMENTS}")
        if self.stages < 0:
            out.append("stages must be >= 0")
        if self.family == "sm90":
            if self.schedule not in SCHEDULES:
                out.append(f"sm90 schedule {self.schedule!r} not in {SCHEDULES}")
            if self.scheduler not in SCHEDULERS:
                out.append(f"sm90 scheduler {self.scheduler!r} not in {SCHEDULERS}")
            if self.warp != (0, 0, 0):
                out.append("sm90 has no warp tile (leave warp=(0,0,0))")
            if not isinstance(self.pdl, bool):
                out.append(f"pdl must be a bool, got {self.pdl!r}")
            if self.l2_promotion not in L2_PROMOTIONS:
                out.append(f"l2_promotion {self.l2_promotion!r} not in {L2_PROMOTIONS}")
        elif self.family == "sm80":
            if self.schedule or self.scheduler:
                out.append("sm80 has no schedule/scheduler (leave them empty)")
            if self.cluster != (1, 1):
                out.append("sm80 has no clusters (leave cluster=(1,1))")
            if min(self.warp, default=0) <= 0:
                out.append(f"sm80 needs a positive warp tile, got {self.warp}")
            if self.stages < 2:
                out.append("sm80 multistage needs stages >= 2")
            if self.pdl:
                out.append("sm80 has no programmatic dependent launch (CUTLASS 2.x kernels have no GDC hooks)")
        elif self.family == "splitk":
            if self.schedule not in SPLITK_SCHEDULES or self.scheduler:
                out.append(f"splitk schedule {self.schedule!r} not in {SPLITK_SCHEDULES}, no scheduler")
            if self.cluster != (1, 1) and not (self.schedule == "cluster" and self.cluster in ((2, 1), (4, 1))):
                out.append("splitk has no M/N clusters (leave cluster=(1,1); schedule=cluster sizes one by splits, "
                           "and may group 2 or 4 M-tiles, cluster=(2,1) / (4,1), to multicast B)")
            if self.warp != (0, 0, 0):
                out.append("splitk has no warp tile (leave warp=(0,0,0))")
            if not isinstance(self.pdl, bool):
                out.append(f"pdl must be a bool, got {self.pdl!r}")
            if self.schedule == "cooperative" and self.l2_prefetch:
                out.append("splitk cooperative has no l2_prefetch twin (its prefetch reads KernelTma's params)")
        if self.family != "sm90" and self.l2_promotion:
            out.append("only sm90 variants set l2_promotion (their TMA descriptors are CUTLASS's)")
        if not isinstance(self.l2_prefetch, bool):
            out.append(f"l2_prefetch must be a bool, got {self.l2_prefetch!r}")
        elif self.l2_prefetch and self.family == "sm80":
            out.append("sm80 has no l2_prefetch (it prefetches through TMA descriptors, before a grid dependency wait)")
        elif self.l2_prefetch and not self.pdl:
            out.append("l2_prefetch needs pdl (it overlaps the previous grid; alone it only adds work)")
        if not isinstance(self.l2_prefetch_kb, int) or self.l2_prefetch_kb < 0 or self.l2_prefetch_kb % 16:
            out.append(f"l2_prefetch_kb must be a non-negative multiple of 16, got {self.l2_prefetch_kb!r}")
        elif self.l2_prefetch_kb and not self.l2_prefetch:
            out.append("l2_prefetch_kb caps an l2_prefetch variant's prefetch (set l2_prefetch)")
        return out

    @property
    def arch(self) -> str:
        """The GPU architecture the variant is built for (kernels.build --arch): sm90 and splitk target sm_90a."""
        return "sm80" if self.family == "sm80" else "sm90"

    @property
    def l2_prefetch_k_tiles(self) -> int:
        """A capped l2_prefetch variant's k-tiles per CTA: whole A+B k-tiles within l2_prefetch_kb, at least one (the
        sm90 wrapper computes the same from the bytes); 0 when uncapped (up to the pipeline's depth)."""
        if not self.l2_prefetch_kb:
            return 0
        tm, tn, tk = self.tile
        return max(1, self.l2_prefetch_kb * 1024 // ((tm + tn) * tk * 2))

    @property
    def name(self) -> str:
        """Stable, readable, unique id; also the .so stem and the tuned-table `kernel` value."""
        parts = [self.family, self.acc, self.b_layout, "t" + _dims(self.tile)]
        if self.family == "sm90":
            parts += ["c" + _dims(self.cluster), "s" + (str(self.stages) if self.stages else "auto"),
                      _SCHEDULE_ABBR[self.schedule], _SCHEDULER_ABBR[self.scheduler]]
        elif self.family == "sm80":
            parts += ["w" + _dims(self.warp), "s" + str(self.stages)]
        else:
            parts += ["s" + (str(self.stages) if self.stages else "auto")]
            if self.schedule:
                parts.append(_SCHEDULE_ABBR[self.schedule])
            if self.cluster != (1, 1):
                parts.append("c" + _dims(self.cluster))
        parts.append("a" + str(self.alignment))
        if self.l2_promotion:
            parts.append(f"l2p{self.l2_promotion}")
        if self.pdl:
            parts.append("pdl")
        if self.l2_prefetch:
            parts.append("l2pf" + (f"{self.l2_prefetch_kb}k" if self.l2_prefetch_kb else ""))
        return "_".join(parts)

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("tile", "cluster", "warp"):
            d[key] = list(d[key])
        if not self.pdl:
            del d["pdl"]  # the field came later: tables and records written before it stay byte-identical
        if not self.l2_promotion:
            del d["l2_promotion"]  # the same
        if not self.l2_prefetch:
            del d["l2_prefetch"]  # the same
        if not self.l2_prefetch_kb:
            del d["l2_prefetch_kb"]  # the same
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "KernelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known - {"name"}
        if unknown:
            raise ValueError(f"unknown KernelConfig keys: {sorted(unknown)}")
        cfg = cls(**{k: v for k, v in d.items() if k in known})
        if "name" in d and d["name"] != cfg.name:
            raise ValueError(f"name {d['name']!r} does not match the config ({cfg.name!r})")
        return cfg

    def __str__(self) -> str:
        return self.name
