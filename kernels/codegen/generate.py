"""KernelConfig -> the text of one translation unit (a .cu file) exporting the C ABI of docs/architecture.md.

The templates beside this file hold the C++; this module only maps config fields to template values, so every
variant is the same code with different types and constants.
"""
from __future__ import annotations

import re
import string
from pathlib import Path

from kernels.config import KernelConfig
from kernels.space import splitk_cluster_warpgroups

CODEGEN_DIR = Path(__file__).resolve().parent
TEMPLATES = {"sm90": "sm90.cu.tmpl", "sm80": "sm80.cu.tmpl", "splitk": "splitk.cu.tmpl",
             "splitk/cluster": "splitk_cluster.cu.tmpl", "splitk/cooperative": "splitk.cu.tmpl"}

# sm90 and splitk kernels use wgmma (sm90 also setmaxnreg): sm_90a only (the -arch=sm_90a shorthand breaks wgmma with nvcc 13.0).
# sm80 kernels get SASS for A100 and for H100/H200: sm_80 SASS does not run on an sm_90 GPU.
GENCODE = {
    "sm90": ("-gencode=arch=compute_90a,code=sm_90a",),
    "sm80": ("-gencode=arch=compute_80,code=[sm_80,sm_90]",),
    "splitk": ("-gencode=arch=compute_90a,code=sm_90a",),
}

_ACC_TYPE = {"f32": "float", "f16": "cutlass::half_t"}
_B_LAYOUT_TYPE = {"row": "cutlass::layout::RowMajor", "col": "cutlass::layout::ColumnMajor"}


def template_for(cfg: KernelConfig) -> str:
    """The template of cfg's variant: one per family, and splitk's cluster reduction has its own (its cooperative
    mainloop shares KernelTma's template)."""
    return TEMPLATES[f"{cfg.family}/{cfg.schedule}" if cfg.family == "splitk" and cfg.schedule else cfg.family]


def gencode_for(cfg: KernelConfig) -> list[str]:
    return list(GENCODE[cfg.family])


def _common_values(cfg: KernelConfig) -> dict:
    tm, tn, tk = cfg.tile
    return {
        "name": cfg.name, "acc_type": _ACC_TYPE[cfg.acc], "b_layout_type": _B_LAYOUT_TYPE[cfg.b_layout],
        "b_col": "true" if cfg.b_layout == "col" else "false", "alignment": cfg.alignment,
        "tile_m": tm, "tile_n": tn, "tile_k": tk,
    }


# Programmatic dependent launch, only in `pdl` variants (both strings are empty otherwise, so that every other
# variant's source, hence its build cache key, is what it was before PDL existed). CUTLASS's sm90 kernels then wait
# (griddepcontrol.wait) before their first global access and let the next grid launch once their mainloop is done.
_GDC_DEFINE = "\n#define CUTLASS_ENABLE_GDC_FOR_SM90 1  // pdl variant: CUTLASS's grid dependency control hooks on"
_PDL_LAUNCH = """
  // pdl variant: the next kernel on the stream may be scheduled before this one finishes (it waits in-kernel).
  cudaLaunchAttribute with_pdl[2] = {attribute[0], {}};
  with_pdl[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  with_pdl[config.numAttrs].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = with_pdl;
  config.numAttrs += 1;"""


# L2 promotion of the TMA loads, only in l2_promotion variants (empty otherwise, so that every other variant's source
# and build key stay as they were). CUTLASS encodes its TMA descriptors with a fixed 128-byte promotion through one
# macro, CUTLASS_CUDA_DRIVER_WRAPPER_CALL; redefined after its header, it routes the encode here with 256 bytes.
_L2_PROMOTION_256 = """
#include "cutlass/cuda_host_adapter.hpp"
// l2_promotion variant: CUTLASS's TMA descriptors encoded with 256-byte L2 promotion instead of 128
namespace hgemm_l2 {
inline CUresult call_cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                            const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                            const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                            CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                                            CUtensorMapFloatOOBfill fill) {
  return cutlass::call_cuTensorMapEncodeTiled(map, type, rank, address, dims, strides, box, element_strides,
                                              interleave, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, fill);
}
template <typename... Args>
CUresult call_cuTensorMapEncodeIm2col(Args... args) { return cutlass::call_cuTensorMapEncodeIm2col(args...); }
}  // namespace hgemm_l2
#undef CUTLASS_CUDA_DRIVER_WRAPPER_CALL
#define CUTLASS_CUDA_DRIVER_WRAPPER_CALL(func) hgemm_l2::call_##func"""


# L2 prefetch before the grid dependency wait, only in l2_prefetch variants (their entry point is our wrapper of
# CUTLASS's kernel, kernels/codegen/l2_prefetch.cuh; every other variant's source stays as it was).
_L2_PREFETCH = """
#include "l2_prefetch.cuh"  // l2_prefetch variant: the first tile's operands go to L2 before the kernel waits"""


# The same before a splitk variant's wait (kernels/codegen/l2_prefetch_splitk.cuh): the include, and the call its
# template places before griddepcontrol.wait (KernelTma's kernel entry / the cluster kernel's producer thread).
_L2_PREFETCH_SPLITK = """
#include "l2_prefetch_splitk.cuh"  // l2_prefetch variant: the first k-tiles go to L2 before the kernel waits"""
_L2_PREFETCH_SPLITK_CALL = {
    "": """
  // l2_prefetch variant: this CTA's first k-tiles to L2 while the previous grid drains
  if (threadIdx.x == 0) hgemm::prefetch_splitk_tile_to_l2<GemmKernel>(params);""",
    "cluster": """
  // l2_prefetch variant: this CTA's first k-tiles (its share of a multicast B) to L2 while the previous grid drains
  if (producer) {
    hgemm::prefetch_k_tiles_to_l2(params.mainloop.tma_load_a, tAgA, params.mainloop.tma_load_b, tBgB,
                                  min(k_tiles, kStages));
  }""",
}


def _splitk_l2_prefetch_call(cfg: KernelConfig) -> str:
    """The prefetch call a splitk l2_prefetch variant places before its wait; a capped one bounds the k-tiles (an
    uncapped one's text is the one its build key was made from)."""
    if not cfg.l2_prefetch:
        return ""
    call = _L2_PREFETCH_SPLITK_CALL[cfg.schedule]
    if not cfg.l2_prefetch_kb:
        return call
    cap, note = cfg.l2_prefetch_k_tiles, f"  // at most {cfg.l2_prefetch_kb} KB"
    old, new = (("min(k_tiles, kStages));", f"min(min(k_tiles, kStages), {cap}));{note}") if cfg.schedule == "cluster"
                else ("prefetch_splitk_tile_to_l2<GemmKernel>(params);",
                      f"prefetch_splitk_tile_to_l2<GemmKernel, {cap}>(params);{note}"))
    if old not in call:  # a template edit must not leave a capped variant prefetching uncapped
        raise ValueError(f"{cfg.name}: no {old!r} in the {cfg.schedule} prefetch call to cap")
    return call.replace(old, new)


def _sm90_kernel_entry(cfg: KernelConfig) -> str:
    """What an sm90 variant launches: CUTLASS's kernel, or our prefetching wrapper of it (with its cap in bytes)."""
    if not cfg.l2_prefetch:
        return "cutlass::device_kernel<GemmKernel>"
    cap = f", {cfg.l2_prefetch_kb * 1024}" if cfg.l2_prefetch_kb else ""
    return f"hgemm::l2_prefetching_kernel<GemmKernel{cap}>"


def _sm90_values(cfg: KernelConfig) -> dict:
    coop = cfg.schedule == "cooperative"
    streamk = cfg.scheduler == "streamk"
    if cfg.stages:
        stage_count = f"cutlass::gemm::collective::StageCount<{cfg.stages}>"
    else:
        stage_count = ("cutlass::gemm::collective::StageCountAutoCarveout<"
                       "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>")
    return {
        "cluster_m": cfg.cluster[0], "cluster_n": cfg.cluster[1], "stage_count": stage_count,
        "kernel_schedule": ("cutlass::gemm::KernelTmaWarpSpecializedCooperative" if coop
                            else "cutlass::gemm::KernelTmaWarpSpecializedPingpong"),
        "epilogue_schedule": ("cutlass::epilogue::TmaWarpSpecializedCooperative" if coop
                              else "cutlass::epilogue::TmaWarpSpecialized"),
        "tile_scheduler": "cutlass::gemm::StreamKScheduler" if streamk else "cutlass::gemm::PersistentScheduler",
        "stream_k": "true" if streamk else "false",
        "gdc_define": _GDC_DEFINE if cfg.pdl else "", "pdl_launch": _PDL_LAUNCH if cfg.pdl else "",
        "l2_promotion": _L2_PROMOTION_256 if cfg.l2_promotion == 256 else "",
        "l2_prefetch": _L2_PREFETCH if cfg.l2_prefetch else "",
        "kernel_entry": _sm90_kernel_entry(cfg),
        # CUTLASS 3 views B as N×K: col (N×K row-major) steps N by ldb; row (K×N row-major) steps K by ldb.
        "b_ld_mode": 0 if cfg.b_layout == "col" else 1,
        "b_ld_comment": "N×K row-major, N steps by ldb" if cfg.b_layout == "col" else "K×N row-major, K steps by ldb",
        "set_splits": ("args.scheduler.splits = p->splits > 0 ? p->splits : 1;  // > 1: split-K instead of stream-K"
                       if streamk else "// persistent scheduler: no splits"),
    }


def _sm80_values(cfg: KernelConfig) -> dict:
    wm, wn, wk = cfg.warp
    return {"warp_m": wm, "warp_n": wn, "warp_k": wk, "stages": cfg.stages}


# splitk cluster variants with two consumer warpgroups (64 rows each) build their own TiledMma, as CUTLASS's
# cooperative kernels do; with one they take KernelTma's (the text these variants were built and tested from).
_TWO_WARPGROUP_MMA = (
    "decltype(cute::make_tiled_mma(cute::GMMA::ss_op_selector<ElementAB, ElementAB, ElementAcc, TileShape, "
    "cutlass::gemm::collective::detail::gmma_ss_tag_to_major_A<ElementAB, LayoutA>(), "
    "cutlass::gemm::collective::detail::gmma_ss_tag_to_major_B<ElementAB, LayoutB>()>(), "
    "cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}))")


# splitk variants on CUTLASS's warp-specialized cooperative mainloop: the same epilogue behind the adapter CUTLASS's
# warp-specialized kernels take a non-TMA epilogue through, which hands it its own shared storage (the ticket lives
# there) and calls it on the consumer warpgroups only, so they synchronize among themselves (the producer warpgroup
# is loading the next tile meanwhile). KernelTma variants get the text they were built and tested from.
_SPLITK_KERNEL_TMA = {
    "coop_note": "", "coop_include": "", "epilogue_storage": "struct SharedStorage {};",
    "epilogue_sync": "__syncthreads();", "epilogue_threads": "int(blockDim.x)",
    "mainloop_schedule": "cutlass::gemm::KernelTma", "collective_epilogue": "SplitKEpilogue",
}
_SPLITK_COOPERATIVE = {
    "coop_note": """
// This variant: CUTLASS's warp-specialized cooperative mainloop instead (a producer warpgroup and two consumer
// warpgroups splitting the tile's rows, persistent over tiles x splits), the epilogue behind CUTLASS's
// Sm90TmaWarpSpecializedAdapter: its own shared storage holds the ticket, and only the consumers synchronize.""",
    "coop_include": '\n#include "cutlass/epilogue/collective/detail.hpp"',
    "epilogue_storage": "struct SharedStorage { uint32_t arrived_before; };  // the adapter's storage: the ticket",
    "epilogue_sync": ("cutlass::arch::NamedBarrier::sync(int(cute::size(tiled_mma)), "
                      "cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);"),
    "epilogue_threads": "int(cute::size(tiled_mma))",
    "mainloop_schedule": "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    "collective_epilogue": "cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<SplitKEpilogue>",
}


def _splitk_values(cfg: KernelConfig) -> dict:
    # B as CUTLASS 3 sees it (N×K): col steps N by ldb, row steps K by ldb; the split (L) mode moves K/S along K.
    col = cfg.b_layout == "col"
    groups = splitk_cluster_warpgroups(cfg)
    return {
        **(_SPLITK_COOPERATIVE if cfg.schedule == "cooperative" else _SPLITK_KERNEL_TMA),
        "stage_count": (f"cutlass::gemm::collective::StageCount<{cfg.stages}>" if cfg.stages
                        else "cutlass::gemm::collective::StageCountAuto"),
        "gdc_define": _GDC_DEFINE if cfg.pdl else "", "pdl": "true" if cfg.pdl else "false",
        "l2_prefetch": _L2_PREFETCH_SPLITK if cfg.l2_prefetch else "",
        "l2_prefetch_call": _splitk_l2_prefetch_call(cfg),
        "b_ld_mode": 0 if col else 1,
        "b_ld_comment": "N×K row-major, N steps by ldb" if col else "K×N row-major, K steps by ldb",
        "b_split_stride": "Ks" if col else "int64_t(Ks) * p->ldb",
        "stages": cfg.stages,  # the cluster template's own pipeline: explicit stage count
        "threads": 128 * groups,
        "consumer_note": "one warpgroup" if groups == 1 else "two warpgroups, 64 rows each",
        "tiled_mma": "typename CollectiveMainloop::TiledMma" if groups == 1 else _TWO_WARPGROUP_MMA,
        "cluster_m": cfg.cluster[0],
    }


_FAMILY_VALUES = {"sm90": _sm90_values, "sm80": _sm80_values, "splitk": _splitk_values}


def generate(cfg: KernelConfig) -> str:
    """The full .cu source of cfg's variant (deterministic: same config, same text)."""
    template = string.Template((CODEGEN_DIR / template_for(cfg)).read_text())
    values = _common_values(cfg)
    values.update(_FAMILY_VALUES[cfg.family](cfg))
    return template.substitute(values)


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def local_headers(source: str, include_dirs=(CODEGEN_DIR,)) -> list[Path]:
    """Headers `source` includes (transitively) that live in include_dirs: they go into the build cache key."""
    found: list[Path] = []
    pending = _INCLUDE.findall(source)
    while pending:
        name = pending.pop()
        for d in include_dirs:
            path = Path(d) / name
            if path.is_file() and path not in found:
                found.append(path)
                pending += _INCLUDE.findall(path.read_text())
                break
    return sorted(found)
