"""The config space as data: which KernelConfigs are valid, the named variant sets, and the shape rules.

`problems(cfg)` lists why a config cannot compile or run well on its target (empty = valid); `enumerate()` walks the
grid below and keeps the valid ones; `variant_set(name)` gives a named, hand-picked list; `supports(cfg, m, n, k)`
says whether a variant can run a problem as is (otherwise the dispatcher pads it or routes it elsewhere).
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import replace
from pathlib import Path

from kernels.config import ACCUMULATORS, B_LAYOUTS, KernelConfig

# Shared memory a CTA may use: H100/H200 (sm_90) 227 KiB; A100 (sm_80) 163 KiB. sm80 variants must fit an A100 too.
SMEM_BYTES = {"sm90": 227 * 1024, "sm80": 163 * 1024, "splitk": 227 * 1024}
# What the sm90 TMA epilogue keeps in shared memory (D staging, two epilogue tiles); an estimate, used for the
# explicit-stage check only (stages=0 lets CUTLASS compute the carveout exactly).
SM90_EPILOGUE_SMEM_ESTIMATE = 32 * 1024
# Accumulator registers per thread that a consumer warpgroup/warp can hold without spilling (fp32 words).
MAX_ACC_REGS = 128

# --- the grid enumerate() walks -----------------------------------------------------------------------------------
SM90_TILES_M = (64, 128, 256)
SM90_TILES_N = (64, 128, 192, 256)
SM90_TILES_K = (64, 128)
SM90_CLUSTERS = ((1, 1), (2, 1), (1, 2))
# sm80 tiles/warp counts/stages: the combinations CUTLASS's own generator instantiates for f16 tensor ops on SM80.
SM80_TILES = (
    # (tile, warps along M/N, stages)
    ((256, 128, 32), (4, 2), (3,)),
    ((128, 256, 32), (2, 4), (3,)),
    ((256, 64, 32), (4, 1), (3, 4)),
    ((64, 256, 32), (1, 4), (4,)),
    ((128, 128, 32), (2, 2), (3, 4, 5)),
    ((128, 64, 32), (2, 2), (6,)),
    ((64, 128, 32), (2, 2), (6,)),
    ((64, 64, 32), (2, 2), (10,)),
    ((256, 128, 64), (4, 2), (3,)),
    ((128, 256, 64), (2, 4), (3,)),
    ((256, 64, 64), (4, 1), (4,)),
    ((64, 256, 64), (1, 4), (4,)),
    ((128, 128, 64), (2, 2), (4,)),
    ((128, 64, 64), (2, 2), (3,)),
    ((64, 128, 64), (2, 2), (3,)),
    ((64, 64, 64), (2, 2), (5,)),
)


def smem_bytes(cfg: KernelConfig) -> int:
    """Shared memory the mainloop pipeline needs (fp16 A and B tiles per stage), plus the sm90 epilogue estimate."""
    tm, tn, tk = cfg.tile
    per_stage = (tm * tk + tn * tk) * 2
    if cfg.family == "sm90":
        stages = cfg.stages or 2  # auto: at least two stages must fit
        return stages * (per_stage + 32) + SM90_EPILOGUE_SMEM_ESTIMATE
    if cfg.family == "splitk" and cfg.schedule == "cluster":  # the fp32 partial tile reuses the stages
        return max(cfg.stages * per_stage, tm * (tn + 8) * 4) + cfg.stages * 16
    if cfg.family == "splitk" and cfg.schedule == "cooperative":  # + the ticket, tile scheduler and pipeline state
        return cfg.stages * (per_stage + 32) + 1024
    if cfg.family == "splitk":  # no epilogue storage; auto: at least the three stages KernelTma's mainloop needs
        return (cfg.stages or 3) * (per_stage + 32)
    return cfg.stages * per_stage


def splitk_cluster_warpgroups(cfg: KernelConfig) -> int:
    """Consumer warpgroups of a splitk variant: two (64 rows each) for cluster tiles wider than 128x128, whose
    accumulators one warpgroup cannot hold; else one."""
    tm, tn, _ = cfg.tile
    return 2 if cfg.family == "splitk" and cfg.schedule == "cluster" and tm == 128 and tn > 128 else 1


def acc_regs_per_thread(cfg: KernelConfig) -> int:
    """Accumulator registers (32-bit) per math thread: f16 accumulators pack two per register."""
    tm, tn, _ = cfg.tile
    if cfg.family == "sm90":
        # cooperative: two consumer warpgroups split the tile along M; pingpong: one warpgroup owns the whole tile
        elems = tm * tn // (256 if cfg.schedule == "cooperative" else 128)
    elif cfg.family == "splitk" and cfg.schedule == "cooperative":
        elems = tm * tn // 256  # two consumer warpgroups split the tile along M
    elif cfg.family == "splitk":
        elems = tm * tn // (128 * splitk_cluster_warpgroups(cfg))  # the whole tile, over one or two warpgroups
    else:
        wm, wn, _ = cfg.warp
        elems = wm * wn // 32
    return elems // 2 if cfg.acc == "f16" else elems


def problems(cfg: KernelConfig) -> list[str]:
    """Why cfg is not a valid variant (empty list = valid)."""
    out = []
    tm, tn, tk = cfg.tile
    if cfg.family == "sm90":
        if cfg.alignment != 8:
            out.append("sm90 (TMA) needs 16-byte alignment: alignment=8")
        if tm % 64:
            out.append("sm90 tile_m must be a multiple of 64 (wgmma M)")
        if tn % 16 or tn > 256:
            out.append("sm90 tile_n must be a multiple of 16 and <= 256 (wgmma N)")
        if tk % 64:
            out.append("sm90 tile_k must be a multiple of 64 (128-byte swizzle of fp16)")
        if cfg.schedule == "cooperative" and tm % 128:
            out.append("cooperative needs tile_m >= 128 (two consumer warpgroups split M)")
        if cfg.schedule == "pingpong" and tm > 128:
            out.append("pingpong needs tile_m <= 128")
        if cfg.scheduler == "streamk" and cfg.schedule != "cooperative":
            out.append("stream-K needs the cooperative schedule (CUTLASS has no pingpong stream-K)")
        if cfg.pdl and cfg.scheduler == "streamk":  # its is_last_tile, called only with GDC on, binds a const member
            out.append("pdl with stream-K does not compile with CUTLASS 4.2 (StreamK is_last_tile)")
        cm, cn = cfg.cluster
        if cm not in (1, 2, 4) or cn not in (1, 2, 4) or cm * cn > 4:
            out.append("cluster dims must be 1/2/4 with at most 4 CTAs")
        if cfg.stages == 1:
            out.append("sm90 needs stages >= 2 (or 0 = auto)")
    elif cfg.family == "splitk":
        if cfg.alignment != 8:
            out.append("splitk (TMA) needs 16-byte alignment: alignment=8")
        if cfg.schedule == "cooperative":
            if tm not in (128, 256):
                out.append("splitk cooperative tile_m must be 128 or 256 (two consumer warpgroups split M)")
        elif tm not in (64, 128):
            out.append("splitk tile_m must be 64 or 128 (one warpgroup of 64-row wgmma)")
        if tn % 16 or tn > 256:
            out.append("splitk tile_n must be a multiple of 16 and <= 256 (wgmma N)")
        if tk % 64:
            out.append("splitk tile_k must be a multiple of 64 (128-byte swizzle of fp16)")
        if cfg.schedule in ("cluster", "cooperative") and cfg.stages < 2:
            out.append(f"splitk {cfg.schedule} needs an explicit stage count >= 2")
        elif cfg.stages in (1, 2):
            out.append("splitk needs stages >= 3 (or 0 = auto): KernelTma keeps one stage in flight for the MMA")
    else:
        wm, wn, wk = cfg.warp
        if tm % wm or tn % wn:
            out.append("sm80 tile must be a multiple of the warp tile")
        elif (tm // wm) * (tn // wn) not in (4, 8):
            out.append("sm80 needs 4 or 8 warps per CTA")
        if wk != tk:
            out.append("sm80 warp_k must equal tile_k")
        if wm % 16 or wn % 8 or tk % 32:
            out.append("sm80 warp tile must be a multiple of the 16x8x16 mma (and tile_k of 32)")
    if acc_regs_per_thread(cfg) > MAX_ACC_REGS:
        out.append(f"accumulators need {acc_regs_per_thread(cfg)} registers/thread (> {MAX_ACC_REGS})")
    if smem_bytes(cfg) > SMEM_BYTES[cfg.family]:
        out.append(f"needs {smem_bytes(cfg)} B of shared memory (> {SMEM_BYTES[cfg.family]})")
    return out


def is_valid(cfg: KernelConfig) -> bool:
    return not problems(cfg)


def _sm90_grid(acc: str, b_layout: str):
    for tm, tn, tk, cluster, schedule, scheduler in itertools.product(
            SM90_TILES_M, SM90_TILES_N, SM90_TILES_K, SM90_CLUSTERS, ("cooperative", "pingpong"),
            ("persistent", "streamk")):
        yield KernelConfig("sm90", acc, b_layout, (tm, tn, tk), cluster=cluster, schedule=schedule,
                           scheduler=scheduler)


def _sm80_grid(acc: str, b_layout: str, alignments):
    for (tile, (wcm, wcn), stage_list), alignment in itertools.product(SM80_TILES, alignments):
        for stages in stage_list:
            warp = (tile[0] // wcm, tile[1] // wcn, tile[2])
            yield KernelConfig("sm80", acc, b_layout, tile, warp=warp, stages=stages, alignment=alignment)


def enumerate(arch: str | None = None, acc: str | None = None, b_layout: str | None = None,
              alignments: tuple[int, ...] = (8,)) -> list[KernelConfig]:
    """Every valid config of the grid, filtered by family ("sm90"/"sm80"), accumulator and B layout."""
    out = []
    for a in ACCUMULATORS if acc is None else (acc,):
        for bl in B_LAYOUTS if b_layout is None else (b_layout,):
            if arch in (None, "sm90"):
                out += [c for c in _sm90_grid(a, bl) if is_valid(c)]
            if arch in (None, "sm80"):
                out += [c for c in _sm80_grid(a, bl, alignments) if is_valid(c)]
    return out


# --- named variant sets -------------------------------------------------------------------------------------------
def _sm90(acc, bl, tile, cluster=(1, 1), schedule="cooperative", scheduler="persistent", stages=0):
    return KernelConfig("sm90", acc, bl, tile, cluster=cluster, schedule=schedule, scheduler=scheduler, stages=stages)


def _sm80(acc, bl, tile, warp, stages, alignment=8):
    return KernelConfig("sm80", acc, bl, tile, warp=warp, stages=stages, alignment=alignment)


def _default_for(acc: str, bl: str) -> list[KernelConfig]:
    return [
        # large squares: big tiles, 2-CTA clusters (TMA multicast halves L2->SMEM traffic of the shared operand)
        _sm90(acc, bl, (128, 256, 64), cluster=(2, 1)),
        _sm90(acc, bl, (256, 128, 64), cluster=(1, 2)),
        _sm90(acc, bl, (128, 128, 64)),
        # long K / few output tiles: stream-K spreads K across all SMs
        _sm90(acc, bl, (128, 128, 64), scheduler="streamk"),
        # small / skinny M: pingpong overlaps one tile's epilogue with the next tile's MMA
        _sm90(acc, bl, (64, 128, 64), schedule="pingpong"),
        _sm90(acc, bl, (64, 256, 64), schedule="pingpong"),
        _sm90(acc, bl, (128, 64, 64), schedule="pingpong"),
        # sm80 multistage: tiny and skinny shapes (below ~1e9 FLOP), split-K for long K
        _sm80(acc, bl, (64, 64, 64), (32, 32, 64), 5),
        _sm80(acc, bl, (64, 128, 32), (32, 64, 32), 6),
        _sm80(acc, bl, (128, 128, 32), (64, 64, 32), 4),
    ]


def _wide_for(acc: str, bl: str) -> list[KernelConfig]:
    """Beyond `default`, around what won the session-2 grid tuning on the H200 (benchmarks/h200-2026-11-30-s2): the
    64x128 pingpong variant won most shapes our kernels took (24 of 25 with fp32 accumulation, 217 with fp16), the
    256x128 cooperative one the large fp16 shapes, the 64x64 sm80 one the tiny fp16 shapes. Its neighbours: K=128
    tiles (fewer barriers per K step), 64x64 and 64x192 pingpong, 128x128 pingpong, the winners with 2-CTA clusters,
    128x192 / 128x256 cooperative (stream-K for the tail wave), and smaller-step sm80 tiles for tiny fp32 shapes."""
    return [
        _sm90(acc, bl, (64, 128, 128), schedule="pingpong"),
        _sm90(acc, bl, (64, 64, 64), schedule="pingpong"),
        _sm90(acc, bl, (64, 64, 128), schedule="pingpong"),
        _sm90(acc, bl, (64, 192, 64), schedule="pingpong"),
        _sm90(acc, bl, (128, 128, 64), schedule="pingpong"),
        _sm90(acc, bl, (64, 128, 64), cluster=(1, 2), schedule="pingpong"),
        _sm90(acc, bl, (64, 128, 64), cluster=(2, 1), schedule="pingpong"),
        _sm90(acc, bl, (128, 64, 64), cluster=(2, 1), schedule="pingpong"),
        _sm90(acc, bl, (128, 128, 64), cluster=(2, 1)),
        _sm90(acc, bl, (128, 192, 64)),
        _sm90(acc, bl, (256, 128, 64), cluster=(2, 1)),
        _sm90(acc, bl, (128, 256, 64), scheduler="streamk"),
        _sm80(acc, bl, (64, 64, 32), (32, 32, 32), 10),
        _sm80(acc, bl, (128, 64, 64), (64, 32, 64), 3),
        _sm80(acc, bl, (64, 128, 64), (32, 64, 64), 3),
    ]


def _pdl_for(acc: str, bl: str) -> list[KernelConfig]:
    """Programmatic-dependent-launch twins: where a GEMM takes a few µs, the launch gap between back-to-back kernels is
    a large part of it, and PDL hides it behind the previous kernel's tail. First the four pingpong tiles that won
    small shapes (tuned on the H200 in session 5), then every other persistent sm90 variant of `wide` (mid shapes:
    tuned in session 6). Stream-K cannot have PDL with CUTLASS 4.2."""
    first = [_sm90(acc, bl, (64, 128, 64), schedule="pingpong"), _sm90(acc, bl, (64, 64, 64), schedule="pingpong"),
             _sm90(acc, bl, (128, 64, 64), schedule="pingpong"), _sm90(acc, bl, (64, 256, 64), schedule="pingpong")]
    rest = [c for c in _default_for(acc, bl) + _wide_for(acc, bl)
            if c.family == "sm90" and c.scheduler == "persistent" and c not in first]
    return [replace(c, pdl=True) for c in first + rest]


def _splitk_for(acc: str, bl: str) -> list[KernelConfig]:
    """Split-K in one kernel for shapes with few output tiles and a long K (e.g. 128x256x12288: 2-8 tiles of 128x128,
    where every library leaves most SMs idle and spends ~8 us; the roofline is ~2 us). Small tiles so that tiles x
    splits covers the SMs; four stages, so that small tiles leave room for more than one CTA per SM; PDL because
    these shapes are a few microseconds long. On the pingpong kernel instead (warp-specialized, persistent, as many
    stages as fit) the tiny shapes ran ~10-20% slower (more set-up per CTA for a few K steps) and the larger ones did
    not reach the tables' choices either: benchmarks/h200-2026-12-02-s13, call 2."""
    return [KernelConfig("splitk", acc, bl, tile, stages=4, pdl=True)
            for tile in ((64, 64, 64), (64, 128, 64), (128, 64, 64), (128, 128, 64))]


def _splitk_cluster_for(acc: str, bl: str) -> list[KernelConfig]:
    """Split-K across a cluster, reduced in distributed shared memory, for the long-K shapes with few output tiles
    (64x64x2048 to 512x128x4096: 5-9 us for every library, roofline 2-3 us) where splitk's L2 reduction (atomics of
    S CTAs on the same lines, one CTA reading the tile back) left most of the gap (session 13). Two depths per tile:
    as many stages as fit one CTA per SM (a whole split of K in flight: the smallest outputs, 64x64x16384 in 7.4 us
    at 16 splits; 512x128x4096 at 8), and few enough for two CTAs per SM (128 CTAs in clusters of 8-16 at ~192 KiB
    each ran like two waves: the GPCs do not hold that many such clusters). Tuned on the H200 in session 14 (calls 1
    and 2, one depth each)."""
    deep = (((128, 128, 64), 6), ((128, 64, 64), 8), ((64, 128, 64), 8), ((64, 64, 64), 8))
    shallow = (((128, 128, 64), 3), ((128, 64, 64), 4), ((64, 128, 64), 4), ((64, 64, 64), 4))
    return [KernelConfig("splitk", acc, bl, tile, stages=stages, schedule="cluster", pdl=True)
            for tile, stages in deep + shallow]


def _splitk_cluster_wide_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for the outputs of ~512x512 and up with a long K, where the cluster variants' 64-wide tiles are
    bound by L2 bandwidth (512x512x16384: 32 us against cuBLAS's 18; session 14): 128x192 and 128x256 tiles over two
    consumer warpgroups, 1.5-2x the FLOP per byte loaded, the fp32 partial tile still in the stages' shared memory.
    Run in session 15 (call 1): correct (GPU suite), but 0.80x of the 64-wide cluster variants' best over the 324
    long-K shapes it was tuned on, and never > 3% faster than the tables' choice; not built by the image."""
    return [KernelConfig("splitk", acc, bl, tile, stages=stages, schedule="cluster", pdl=True)
            for tile, stages in (((128, 256, 64), 3), ((128, 192, 64), 4))]


def _splitk_cluster_mc_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for the long-K outputs of ~512x512 and up, where the cluster variants are bound by L2 bandwidth
    (512x512x16384 at 2 splits loads ~268 MB: 32 us, cuBLAS 18): clusters of 2 or 4 M-tiles x S splits whose CTAs of
    one split share each B tile, loaded once and multicast by TMA (B's traffic / CM). Written in session 15, compiled
    on the CPU box, not yet run on a GPU; not built by the image."""
    return [KernelConfig("splitk", acc, bl, tile, cluster=(cm, 1), stages=stages, schedule="cluster", pdl=True)
            for cm in (2, 4) for tile, stages in (((64, 64, 64), 8), ((128, 64, 64), 8), ((128, 128, 64), 6))]


def _splitk_deep_for(acc: str, bl: str) -> list[KernelConfig]:
    """Deeper-pipelined splitk variants, an experiment for the mid-size long-K shapes (256x512x4096, 1024x128x4096:
    ~9 us for everyone) where the four-stage ones ran latency-bound (session 13). Not built by the image."""
    return [KernelConfig("splitk", acc, bl, tile, stages=stages, pdl=True)
            for tile, stages in (((64, 64, 64), 8), ((64, 64, 64), 12), ((64, 64, 128), 6), ((128, 64, 64), 8),
                                 ((64, 128, 64), 8))]


def _splitk_coop_for(acc: str, bl: str) -> list[KernelConfig]:
    """splitk's L2 reduction on CUTLASS's warp-specialized cooperative mainloop, an experiment (session 34, compiled
    on the CPU box, not yet run on a GPU) for the long-K shapes where the KernelTma ones trail cuBLAS by 1.3-2x
    (256x2048x12288: 35-57 us against cuBLASLt's 25; session 13's pingpong form 42 against 32 on 256x2048x16384) and
    the skinny memory-bound ones (tuner/grids/skinny_long.txt): two consumer warpgroups and a producer that keeps the
    stages full, persistent over tiles x splits. As many stages as fit one CTA per SM (~197 KB)."""
    return [KernelConfig("splitk", acc, bl, tile, stages=stages, schedule="cooperative", pdl=True)
            for tile, stages in (((128, 128, 64), 6), ((128, 64, 64), 8), ((128, 256, 64), 4), ((256, 128, 64), 4))]


def _pdl_mid_for(acc: str, bl: str) -> list[KernelConfig]:
    """More PDL variants for mid-size shapes (1e9-1e11 FLOP, where the tables still choose cuBLAS for 285 of 444
    f32 shapes): neighbours of what the session-6 tables run there — 64x256 pingpong (the most chosen variant), 64x64,
    128x128 cooperative, 64x64x128, 128x256 2x1 cooperative — with other clusters, K=128 tiles, and the large
    cooperative tiles without a cluster (any grid, no multicast). Built on the CPU box in session 6; tested and tuned on
    the H200 in session 7 (the graph choice of 111 f32 / 162 f16 grid shapes)."""
    return [replace(c, pdl=True) for c in (
        _sm90(acc, bl, (64, 256, 64), cluster=(2, 1), schedule="pingpong"),
        _sm90(acc, bl, (64, 256, 64), cluster=(1, 2), schedule="pingpong"),
        _sm90(acc, bl, (64, 256, 128), schedule="pingpong"),
        _sm90(acc, bl, (64, 192, 128), schedule="pingpong"),
        _sm90(acc, bl, (128, 128, 64), cluster=(2, 1), schedule="pingpong"),
        _sm90(acc, bl, (128, 256, 64)),
        _sm90(acc, bl, (256, 128, 64)),
        _sm90(acc, bl, (128, 128, 128)),
    )]


def _skinny_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for the memory-bound 1e9-1e11 FLOP shapes with one short side (M or N <= 256; 211 of 456 in the
    f32 col grid, 1.05-1.07x of torch.matmul against the other shapes' 1.07-1.18x; session 22): there every CTA
    streams the short side's whole operand for its tile of the long side (128x8192x8192 with 64x128 tiles: 384 MB of
    L2->SM traffic for 138 MB of operands, ~10 TB/s at 38 us), so TMA multicast of that operand across a cluster along
    the long side cuts L2 reads by the cluster size. Clusters of 2 and 4 along N (A shared: M <= 256) and along M (B
    shared: N <= 256), pingpong tiles that keep >= 128 CTAs on such shapes, K = 128 steps for fewer barriers; the last
    of each list are wide_pdl's cluster variants (built already), timed beside them."""
    along_n = (((64, 128, 128), (1, 2), "pingpong"), ((64, 128, 64), (1, 4), "pingpong"),
               ((64, 64, 128), (1, 4), "pingpong"), ((128, 64, 128), (1, 2), "pingpong"),
               ((128, 64, 64), (1, 4), "pingpong"), ((128, 128, 64), (1, 2), "cooperative"),
               ((128, 64, 64), (2, 2), "pingpong"), ((64, 128, 64), (1, 2), "pingpong"))
    along_m = (((128, 64, 128), (2, 1), "pingpong"), ((128, 64, 64), (4, 1), "pingpong"),
               ((64, 128, 64), (4, 1), "pingpong"), ((64, 128, 128), (2, 1), "pingpong"),
               ((64, 64, 128), (4, 1), "pingpong"), ((128, 64, 64), (2, 1), "pingpong"),
               ((64, 128, 64), (2, 1), "pingpong"), ((128, 128, 64), (2, 1), "cooperative"))
    return [replace(_sm90(acc, bl, tile, cluster=cluster, schedule=schedule), pdl=True)
            for tile, cluster, schedule in along_n + along_m]


def _small_k_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for large outputs with a short K (K <= 256 and >= 2 waves of 128x128 tiles, e.g. 16384x16384x256,
    12288x2048x256): the group furthest below the roofline after the few-tile long-K shapes (0.46-0.55 of it, session
    34) and won by cuBLASLt, our best there (128x128 / 64x256 pingpong, 2x1 clusters, pdl) 0.94-0.95x of cuBLAS on
    16384x16384x256 in every tuning run. With 4 K steps a tile reads (tile_m + tile_n) x K of operands from L2 for
    little MMA: at the tensor peak 128x128 tiles of K = 256 would pull ~15 TB/s over 132 SMs (an estimate, more than
    L2 is thought to give), and the one cluster shape the search had (2x1) moved the tuned speedups by 1-4%. 2x2
    clusters multicast both operands (half of the unclustered L2 reads, against 2x1's three quarters); 1x2 shares A;
    pingpong keeps the epilogue, a large share of a 4-step tile, under the other warpgroup's MMA."""
    tiles = (((128, 128, 64), (2, 2)), ((64, 256, 64), (2, 2)), ((128, 128, 64), (1, 2)))
    return [replace(_sm90(acc, bl, tile, cluster=cluster, schedule="pingpong"), pdl=True) for tile, cluster in tiles]


def _long_k_steps_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for memory-bound shapes with one short side and B column-major (session 27): there torch.matmul,
    given B row-major, runs 3-5% faster than every cuBLAS TN algorithm and our kernels (128x8192x4096, 64x16384x16384
    f32). Row-major B streams each K row contiguously across the CTAs; K-major B gives each CTA 128-byte pieces of its
    own rows per 64-deep K step, spread over DRAM pages. K = 256 steps fetch 512 contiguous bytes per row; tiles small
    enough that >= 128 CTAs run on such shapes and two or more stages fit. PDL, as the graph choices of such shapes.
    Lost on all 34 shapes it ran (session 27, call 3: best 0.92x of torch.matmul on 64x16384x16384, where ours ran
    0.97x; 0.07-0.81x elsewhere): cuBLAS runs the same kernel for both layouts, NN 3.5% faster (call 4)."""
    tiles = ((64, 64, 256), (64, 128, 256), (128, 64, 256), (64, 256, 128))
    return [replace(_sm90(acc, bl, tile, schedule="pingpong"), pdl=True) for tile in tiles]


def _l2_promotion_for(acc: str, bl: str) -> list[KernelConfig]:
    """An experiment for the same skinny memory-bound shapes as `long_k` (session 27): CUTLASS encodes every TMA
    descriptor with a 128-byte L2 promotion; with 256 bytes each K-major B row fetch brings the next K step's bytes
    into L2 too, two DRAM bursts per row instead of one. The pdl pingpong tiles the tables run on such shapes.
    No effect (session 28, call 1, each beside its 128-byte twin on the 34 shapes): 0.999x, 1.016x, 1.002x, 0.996x
    (per-shape range 0.956-1.071); the best of the four beat ours on 2 shapes by 1.3-2.1%, as its twin did."""
    tiles = ((64, 128, 64), (64, 128, 128), (128, 64, 64), (64, 256, 64))
    return [replace(_sm90(acc, bl, tile, schedule="pingpong"), pdl=True, l2_promotion=256) for tile in tiles]


def l2_prefetch_twin(cfg: KernelConfig, kb: int = 0) -> KernelConfig | None:
    """The l2_prefetch twin of an sm90 or splitk pdl variant (None for any other, a twin included, and for a cooperative
    splitk one, which has none yet); kb > 0: the twin that prefetches at most kb KB per CTA."""
    if (cfg.family not in ("sm90", "splitk") or not cfg.pdl or cfg.l2_prefetch
            or (cfg.family == "splitk" and cfg.schedule == "cooperative")):
        return None
    return replace(cfg, l2_prefetch=True, l2_prefetch_kb=kb)


L2_PREFETCH_CAP_KB = 64  # the capped twins' cap: inside what paid with 128-132 CTAs in session 30 (<= ~100 KB)


def _l2_prefetch_twins(layout: str, family: str = "sm90", kb: int = 0) -> list[KernelConfig]:
    """For kernel-only time on small shapes, where a pdl kernel's critical path is: the previous grid ends, this one's
    wait returns, its first TMA loads go to HBM. The twins prefetch their first tile's operands into L2 before that
    wait (kernels/codegen/l2_prefetch.cuh), overlapping the load latency with the previous grid's tail: the twins of
    the pdl variants of `family` the committed tables run in `layout` (of their bases, where the tables run a twin
    already), each once. Session 30: 1.07-1.09x below 1e9 FLOP, a loss where many CTAs prefetch much; the tables run
    them where they pay (tuner/prefetch_twins.py).
    kb > 0: the twins capped at kb KB per CTA, for the graph choices whose full prefetch lost (sm90: 128-132 CTAs
    prefetching 130-220 KB each, session 30; capped at 64 KB they ran 1.02x there in the col layout, session 32.
    splitk: grids prefetching more than 4 MiB in all, session 32)."""
    bases = [replace(c, l2_prefetch=False, l2_prefetch_kb=0) for c in _committed_table_variants()
             if c.b_layout == layout and c.family == family]
    twins = (l2_prefetch_twin(c, kb) for c in bases)
    return list(dict.fromkeys(c for c in twins if c is not None))


def _smoke() -> list[KernelConfig]:
    """One sm90 + one sm80 per accumulator/layout, spread over schedules, schedulers, clusters (all in default)."""
    return [
        _sm90("f32", "col", (128, 128, 64), scheduler="streamk"),
        _sm80("f32", "col", (128, 128, 32), (64, 64, 32), 4),
        _sm90("f32", "row", (128, 256, 64), cluster=(2, 1)),
        _sm80("f32", "row", (64, 64, 64), (32, 32, 64), 5),
        _sm90("f16", "col", (64, 128, 64), schedule="pingpong"),
        _sm80("f16", "col", (64, 64, 64), (32, 32, 64), 5),
        _sm90("f16", "row", (128, 128, 64)),
        _sm80("f16", "row", (128, 128, 32), (64, 64, 32), 4),
    ]


VARIANT_SETS = {
    "smoke": _smoke,
    "default": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS for c in _default_for(a, bl)],
    # default plus the wide additions, B column-major (x @ Wᵀ, the layout the grid tables are tuned for)
    "wide": lambda: [c for a in ACCUMULATORS for c in _default_for(a, "col") + _wide_for(a, "col")],
    # the same for B row-major (x @ W), for row-layout tables; its 30 additions are built apart (kernels.build --set
    # wide_row --exclude default), so that a col-only run never compiles them
    "wide_row": lambda: [c for a in ACCUMULATORS for c in _default_for(a, "row") + _wide_for(a, "row")],
    # the pdl twins alone (what `kernels.build --set pdl` compiles), and wide plus them (what tuning searches)
    "pdl": lambda: [c for a in ACCUMULATORS for c in _pdl_for(a, "col")],
    "wide_pdl": lambda: [c for a in ACCUMULATORS
                         for c in _default_for(a, "col") + _wide_for(a, "col") + _pdl_for(a, "col")],
    # more pdl variants for mid-size shapes (built apart: kernels.build --set pdl_mid), and everything to tune with them
    "pdl_mid": lambda: [c for a in ACCUMULATORS for c in _pdl_mid_for(a, "col")],
    "wide_pdl_mid": lambda: [c for a in ACCUMULATORS for c in _default_for(a, "col") + _wide_for(a, "col")
                             + _pdl_for(a, "col") + _pdl_mid_for(a, "col")],
    # split-K in one kernel, both layouts (built apart: kernels.build --set splitk)
    "splitk": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS for c in _splitk_for(a, bl)],
    # split-K across a cluster, both layouts (built apart: kernels.build --set splitk_cluster)
    "splitk_cluster": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS for c in _splitk_cluster_for(a, bl)],
    # their twins without PDL (not in the image): tuned, they give the lone-call kernel time that eager choices are
    # costed with (tuner/objective.py, lone_kernel_us), instead of --pdl-alone-factor's estimate
    "splitk_cluster_lone": lambda: [replace(c, pdl=False) for c in VARIANT_SETS["splitk_cluster"]()],
    # clusters of 2 / 4 M-tiles multicasting B (an experiment: kernels.build --set splitk_cluster_mc)
    "splitk_cluster_mc": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS for c in _splitk_cluster_mc_for(a, bl)],
    # splitk on the warp-specialized cooperative mainloop (an experiment: kernels.build --set splitk_coop)
    "splitk_coop": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS for c in _splitk_coop_for(a, bl)],
    # wider cluster tiles over two consumer warpgroups (an experiment: kernels.build --set splitk_cluster_wide)
    "splitk_cluster_wide": lambda: [c for a in ACCUMULATORS for bl in B_LAYOUTS
                                    for c in _splitk_cluster_wide_for(a, bl)],
    # splitk plus deeper pipelines, f32 (an experiment: kernels.build --set splitk_deep --exclude splitk)
    "splitk_deep": lambda: [c for bl in B_LAYOUTS for c in _splitk_for("f32", bl) + _splitk_deep_for("f32", bl)],
    # clusters multicasting the short side's operand, for skinny memory-bound shapes (an experiment:
    # kernels.build --set skinny, or skinny_row for B row-major)
    "skinny": lambda: [c for a in ACCUMULATORS for c in _skinny_for(a, "col")],
    "skinny_row": lambda: [c for a in ACCUMULATORS for c in _skinny_for(a, "row")],
    # 2x2 / 1x2 cluster pingpong tiles for large outputs with a short K, f32 (the f16 tables run fp32-accumulating
    # arms on large shapes, and their sweeps time them), both layouts (an experiment: kernels.build --set small_k;
    # tuner.set_sweep lists them per shape for scripts/h200_twin_sweep.sh)
    "small_k": lambda: [c for bl in B_LAYOUTS for c in _small_k_for("f32", bl)],
    # 256-deep K steps for skinny memory-bound shapes with B column-major (an experiment: kernels.build --set long_k)
    "long_k": lambda: [c for c in _long_k_steps_for("f32", "col")],
    # the same shapes' tiles with 256-byte L2 promotion of their TMA loads (an experiment, no effect: session 28)
    "l2promo": lambda: [c for c in _l2_promotion_for("f32", "col")],
    # the tables' sm90 pdl variants prefetching their first tile into L2 before the grid dependency wait, per B
    # layout (kernels.build --set l2_prefetch / l2_prefetch_row; the tables run some: col since session 30, row 32)
    "l2_prefetch": lambda: _l2_prefetch_twins("col"),
    "l2_prefetch_row": lambda: _l2_prefetch_twins("row"),
    # the same for the tables' splitk pdl variants (mostly cluster ones: the small long-K shapes), both layouts
    # (kernels.build --set l2_prefetch_splitk; the tables run them where the grid prefetches <= 4 MiB, session 32)
    "l2_prefetch_splitk": lambda: _l2_prefetch_twins("col", "splitk") + _l2_prefetch_twins("row", "splitk"),
    # the sm90 col twins again, prefetching at most L2_PREFETCH_CAP_KB per CTA (kernels.build --set
    # l2_prefetch_capped; the col tables run them where the full prefetch loses, session 32)
    "l2_prefetch_capped": lambda: _l2_prefetch_twins("col", kb=L2_PREFETCH_CAP_KB),
    # the same for the row sm90 and both layouts' splitk graph choices the rules leave (experiments until the device
    # measures them: kernels.build --set l2_prefetch_capped_row / l2_prefetch_splitk_capped)
    "l2_prefetch_capped_row": lambda: _l2_prefetch_twins("row", kb=L2_PREFETCH_CAP_KB),
    "l2_prefetch_splitk_capped": lambda: (_l2_prefetch_twins("col", "splitk", L2_PREFETCH_CAP_KB)
                                          + _l2_prefetch_twins("row", "splitk", L2_PREFETCH_CAP_KB)),
    # what the committed tuned tables run (kernels/tables): what a deployment has built anyway (the pack, the image),
    # so tuning a deployment's own shapes over it compiles nothing (tuner.follow, docs/dispatch.md)
    "tables": lambda: _committed_table_variants(),
    # the row-major-B twins of what the col tables run (the col winners, x @ Wᵀ, as the first candidates for x @ W):
    # what row-layout tables are tuned over
    "tables_row": lambda: _row_set(_committed_table_variants()),
    "all": lambda: enumerate(),
}


def _committed_table_variants() -> list[KernelConfig]:
    """table_variants() of the committed tables, loaded once per version of their files: several sets derive from
    them, and config_named walks every set (uncached, rebuilding the tables spent ~20 min re-reading them)."""
    from kernels import tuned_tables

    directory = Path(tuned_tables.TABLES_DIR)
    files = sorted(directory.rglob("*.json"))  # the GPU overlays' too
    version = (str(directory), *((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))
    return list(_table_variants_of(version))


@functools.lru_cache(maxsize=1)
def _table_variants_of(version: tuple) -> tuple[KernelConfig, ...]:
    from kernels.tuned_tables import table_variants

    return tuple(table_variants(version[0]))


def _row_twins(configs: list[KernelConfig]) -> list[KernelConfig]:
    out: list[KernelConfig] = []
    for cfg in configs:
        twin = replace(cfg, b_layout="row")
        if cfg.b_layout == "col" and twin not in out:
            out.append(twin)
    return out


def _row_set(configs: list[KernelConfig]) -> list[KernelConfig]:
    """The row twins of the col variants, then the row variants themselves: a row choice stays in the set (and in
    the image) when a later col correction drops its col twin from the tables (session 19's col round 4 did)."""
    twins = _row_twins(configs)
    return twins + [cfg for cfg in configs if cfg.b_layout == "row" and cfg not in twins]


def variant_set(name: str) -> list[KernelConfig]:
    try:
        configs = VARIANT_SETS[name]()
    except KeyError:
        raise KeyError(f"unknown variant set {name!r}; known: {sorted(VARIANT_SETS)}") from None
    bad = {c.name: problems(c) for c in configs if problems(c)}
    assert not bad, f"variant set {name} holds invalid configs: {bad}"
    return configs


def variant_sets(names: str) -> list[KernelConfig]:
    """The members of comma-separated sets ("default,tables_row"), each once, in the order the sets list them."""
    out: dict[str, KernelConfig] = {}
    for name in filter(None, (n.strip() for n in names.split(","))):
        for cfg in variant_set(name):
            out.setdefault(cfg.name, cfg)
    return list(out.values())


def config_named(name: str) -> KernelConfig:
    """The config whose name is `name`: a member of a named set or of the enumerated space, or the pdl twin of one."""
    base_name = name.removesuffix("_pdl")
    for make in VARIANT_SETS.values():
        for cfg in make():
            if cfg.name == name:
                return cfg
            if cfg.name == base_name and cfg.family == "sm90":
                return replace(cfg, pdl=True)
    raise KeyError(f"unknown variant {name!r}")


# --- shapes and runtime knobs -------------------------------------------------------------------------------------
INT32_MAX = 2**31 - 1


def supports(cfg: KernelConfig, m: int, n: int, k: int) -> bool:
    """Can cfg run C[m,n] = A[m,k] @ B as is (packed operands)? K is contiguous in A (and in B when b_layout=col),
    N in C (and in B when b_layout=row): those extents must be multiples of the access width."""
    if min(m, n, k) < 1 or max(m, n, k) > INT32_MAX:
        return False
    a = cfg.alignment
    return k % a == 0 and n % a == 0


def splits_fit(cfg: KernelConfig, k: int, splits: int) -> bool:
    """Can a splitk variant cut this K into `splits` parts? Each must be a whole number of 16-byte steps (the kernels
    return HGEMM_ERR_UNSUPPORTED otherwise: a search that proposes it wastes a trial, as 2 of session 28's did)."""
    return cfg.family != "splitk" or splits <= 1 or k % (splits * cfg.alignment) == 0


def runtime_knobs(cfg: KernelConfig) -> dict[str, tuple[int, ...]]:
    """Values of hgemm_args_t's runtime knobs this variant honours (0 = the kernel's default)."""
    if cfg.family == "sm90":
        splits = (0, 1, 2, 3, 4, 8) if cfg.scheduler == "streamk" else (0, 1)
        # raster: 0 heuristic, 1 along M, 2 along N; swizzle: CUTLASS max_swizzle_size
        return {"raster": (0, 1, 2), "swizzle": (0, 1, 2, 4, 8), "splits": splits}
    if cfg.family == "splitk" and cfg.schedule == "cluster":  # splits x M-tiles = CTAs per cluster (16: non-portable)
        return {"raster": (0,), "swizzle": (0,),
                "splits": tuple(s for s in (0, 2, 4, 8, 16) if s * cfg.cluster[0] <= 16)}
    if cfg.family == "splitk":  # each split a whole number of 16-byte steps of K: splits_fit says for which K
        return {"raster": (0,), "swizzle": (0,), "splits": (0, 2, 4, 8, 16, 32)}
    # CUTLASS 2.x swizzle is a template argument (GemmIdentityThreadblockSwizzle<8>, adaptive to the grid).
    return {"raster": (0,), "swizzle": (0,), "splits": (0, 1, 2, 3, 4, 8, 16)}


__all__ = ["problems", "is_valid", "enumerate", "variant_set", "config_named", "supports", "splits_fit",
           "runtime_knobs", "smem_bytes", "acc_regs_per_thread", "splitk_cluster_warpgroups", "VARIANT_SETS"]
