// The entry point of l2_prefetch variants (kernels/codegen/generate.py includes this header only in them, so no
// other variant's source or build key changes): CUTLASS's sm90 kernel, entered after one thread has prefetched the
// operands of this CTA's first output tile into L2.
//
// Why: a pdl variant is scheduled while the previous grid on the stream drains, then waits (griddepcontrol.wait)
// before its first load; on a small GEMM its A and B then come from HBM on the critical path. A prefetch into L2
// issued before that wait overlaps their latency with the previous grid's tail. It is safe before the wait: global
// memory is coherent in L2, so a line the previous grid writes afterwards is updated there, never read stale (the
// TMA loads that feed shared memory still wait, inside CUTLASS's kernel).
#pragma once

#include "cute/tensor.hpp"
#include "cute/algorithm/prefetch.hpp"
#include "cute/arch/cluster_sm90.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"  // CUTLASS_GRID_CONSTANT

namespace hgemm {

// The first tile of this CTA (the kernel's own tile scheduler, as its producer warp will walk it): its A and B k-tiles,
// up to the pipeline's depth (what the producer loads before it waits on the consumers), through the mainloop's TMA
// descriptors as `cp.async.bulk.prefetch.tensor` — each CTA of a cluster its own share of a multicast tile, as its loads.
// MaxBytes > 0 (capped variants) stops after the k-tiles whose whole A + B tiles fit in MaxBytes (at least one): where
// every SM is busy, a deep prefetch queues ahead of the loads it was meant to speed up (docs/kernels.md).
template <class Kernel, int MaxBytes = 0>
CUTLASS_DEVICE void prefetch_first_tile_to_l2(typename Kernel::Params const& params) {
  using namespace cute;
  using Mainloop = typename Kernel::CollectiveMainloop;
  using ClusterShape = typename Kernel::ClusterShape;
  typename Kernel::TileScheduler scheduler{params.scheduler};
  auto work = scheduler.initial_work_tile_info(ClusterShape{});
  if (!work.is_valid()) return;
  Mainloop mainloop;
  auto inputs = mainloop.load_init(append<4>(params.problem_shape, Int<1>{}), params.mainloop);
  Tensor gA_mkl = get<0>(inputs);  // (BLK_M, BLK_K, m, k, l)
  Tensor gB_nkl = get<1>(inputs);  // (BLK_N, BLK_K, n, k, l)
  auto m = idx2crd(work.M_idx, shape<2>(gA_mkl));
  auto n = idx2crd(work.N_idx, shape<2>(gB_nkl));
  auto l = idx2crd(work.L_idx, shape<4>(gB_nkl));
  const uint32_t rank = block_rank_in_cluster();
  constexpr uint32_t kClusterX = size<0>(ClusterShape{});
  Tensor tAgA = params.mainloop.tma_load_a.get_slice(rank / kClusterX).partition_S(gA_mkl(_, _, m, _, l));
  Tensor tBgB = params.mainloop.tma_load_b.get_slice(rank % kClusterX).partition_S(gB_nkl(_, _, n, _, l));
  int k_tiles = min(int(size<3>(tAgA)), int(Mainloop::DispatchPolicy::Stages));
  if constexpr (MaxBytes > 0) {
    using Tile = typename Kernel::TileShape;
    constexpr int kTileBytes =
        int((size<0>(Tile{}) + size<1>(Tile{})) * size<2>(Tile{}) * sizeof(typename Kernel::ElementA));
    k_tiles = min(k_tiles, max(1, MaxBytes / kTileBytes));
  }
  for (int k = 0; k < k_tiles; ++k) {
    prefetch(params.mainloop.tma_load_a, tAgA(_, _, _, k));
    prefetch(params.mainloop.tma_load_b, tBgB(_, _, _, k));
  }
}

// cutlass::device_kernel<Kernel> with the prefetch first. The first consumer thread issues it: consumers only wait on
// the pipeline at the start, while the producer warp (thread 0's) sets up the barriers and waits on the last grid.
template <class Kernel, int MaxBytes = 0>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerMultiprocessor)
l2_prefetching_kernel(CUTLASS_GRID_CONSTANT typename Kernel::Params const params) {
  extern __shared__ char smem[];
  if (threadIdx.x == cutlass::NumThreadsPerWarpGroup) prefetch_first_tile_to_l2<Kernel, MaxBytes>(params);
  Kernel op;
  op(params, smem);
}

}  // namespace hgemm
