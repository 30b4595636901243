// The L2 prefetch of l2_prefetch splitk variants (kernels/codegen/generate.py includes this header only in them, so
// no other variant's source or build key changes): as l2_prefetch.cuh does for the sm90 kernels, one thread sends the
// A and B k-tiles its CTA loads first to L2 before the kernel waits on the previous grid (griddepcontrol.wait), so
// their HBM latency overlaps that grid's tail. Safe before the wait for the reason given there: L2 is where global
// memory is coherent; the TMA loads into shared memory still come after the wait.
#pragma once

#include "cute/tensor.hpp"
#include "cute/algorithm/prefetch.hpp"
#include "cutlass/cutlass.h"

namespace hgemm {

// The first `count` k-tiles of a CTA's TMA-partitioned A and B slices ((TMA, TMA_M|N, TMA_K, k) source views, as the
// CTA's own loads partition them) as `cp.async.bulk.prefetch.tensor` through the same descriptors.
template <class TmaA, class TensorA, class TmaB, class TensorB>
CUTLASS_DEVICE void prefetch_k_tiles_to_l2(TmaA const& tma_a, TensorA const& tAgA, TmaB const& tma_b,
                                           TensorB const& tBgB, int count) {
  using namespace cute;
  for (int k = 0; k < count; ++k) {
    prefetch(tma_a, tAgA(_, _, _, k));
    prefetch(tma_b, tBgB(_, _, _, k));
  }
}

// splitk.cu.tmpl's kernel (CUTLASS's KernelTma GemmUniversal, cluster 1x1): the CTA's tile is (blockIdx.x,
// blockIdx.y) of split blockIdx.z, as sm90_gemm_tma.hpp slices it; its mainloop keeps up to Stages k-tiles in flight.
// MaxKTiles > 0 (a capped variant, l2_prefetch_kb): at most that many.
template <class Kernel, int MaxKTiles = 0>
CUTLASS_DEVICE void prefetch_splitk_tile_to_l2(typename Kernel::Params const& params) {
  using namespace cute;
  using X = Underscore;
  using Mainloop = typename Kernel::CollectiveMainloop;
  auto problem = append<4>(params.problem_shape, Int<1>{});
  auto M = get<0>(problem), N = get<1>(problem), K = get<2>(problem), L = get<3>(problem);
  Tensor mA = params.mainloop.tma_load_a.get_tma_tensor(make_shape(M, K, L));  // (m, k, l)
  Tensor mB = params.mainloop.tma_load_b.get_tma_tensor(make_shape(N, K, L));  // (n, k, l)
  auto tile = typename Kernel::TileShape{};
  Tensor gA = local_tile(mA, tile, make_coord(_, _, _), Step<_1, X, _1>{})(_, _, int(blockIdx.x), _, int(blockIdx.z));
  Tensor gB = local_tile(mB, tile, make_coord(_, _, _), Step<X, _1, _1>{})(_, _, int(blockIdx.y), _, int(blockIdx.z));
  Tensor tAgA = params.mainloop.tma_load_a.get_slice(0).partition_S(gA);  // (TMA, TMA_M, TMA_K, k)
  Tensor tBgB = params.mainloop.tma_load_b.get_slice(0).partition_S(gB);
  int count = min(int(size<3>(tAgA)), int(Mainloop::DispatchPolicy::Stages));
  if constexpr (MaxKTiles > 0) count = min(count, MaxKTiles);
  prefetch_k_tiles_to_l2(params.mainloop.tma_load_a, tAgA, params.mainloop.tma_load_b, tBgB, count);
}

}  // namespace hgemm
