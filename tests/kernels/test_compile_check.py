"""Compile-check one sm90 (sm_90a) and one sm80 (sm_80 + sm_90 SASS) variant of the smoke set, one pdl variant, one
l2_promotion variant, one capped l2_prefetch variant (its wrapper with the cap), one splitk cluster l2_prefetch
variant, one capped one-kernel splitk l2_prefetch variant and one splitk cooperative variant, with the local nvcc and
the wheel's CUTLASS headers. Slow (minutes on 2 cores), not GPU: runs in CPU CI. Built objects land in the build cache
(a cache hit when they were built before)."""
import ctypes

import pytest

from kernels import build, space

pytestmark = pytest.mark.slow


def _have_toolchain() -> str | None:
    if build.nvcc_path() is None:
        return "nvcc not found"
    if build.ninja_path() is None:
        return "ninja not found"
    try:
        build.cutlass_include_dirs()
    except Exception as exc:  # noqa: BLE001 - any locator failure means: no headers here
        return f"CUTLASS headers not found: {exc}"
    return None


SKIP = _have_toolchain()
SMOKE = space.variant_set("smoke")
PICKS = [next(c for c in SMOKE if c.family == "sm90" and c.schedule == "pingpong"),
         next(c for c in SMOKE if c.family == "sm80" and c.acc == "f16"),
         space.variant_set("pdl")[0],  # a programmatic-dependent-launch variant: CUTLASS's GDC hooks and the attribute
         space.variant_set("l2promo")[0],  # CUTLASS's TMA encode rerouted through our 256-byte L2 promotion wrapper
         space.variant_set("l2_prefetch_capped")[0],  # CUTLASS's kernel entered through our L2-prefetching wrapper
         space.variant_set("l2_prefetch_splitk")[0],  # a splitk cluster kernel prefetching before its wait
         # a one-kernel splitk variant prefetching at most 64 KB (the header's k-tile bound)
         next(c for c in space.variant_set("l2_prefetch_splitk_capped") if c.schedule == ""),
         space.variant_set("splitk_coop")[0]]  # splitk's epilogue behind CUTLASS's warp-specialized adapter


@pytest.mark.skipif(SKIP is not None, reason=str(SKIP))
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("cfg", PICKS, ids=lambda c: c.name)
def test_variant_compiles_and_exports_the_abi(cfg):
    report = build.build([cfg], jobs=1)
    result = report.variants[0]
    assert result.error is None, result.error
    lib = ctypes.CDLL(str(result.path))  # loading needs no GPU (cudart is static and loads the driver lazily)
    lib.hgemm_variant_name.restype = ctypes.c_char_p
    assert lib.hgemm_variant_name() == cfg.name.encode()

    from kernels.runtime import HGEMM_ERR_INVALID_ARGS, HGEMM_ERR_UNSUPPORTED, hgemm_args_t
    lib.hgemm_can_implement.argtypes = [ctypes.POINTER(hgemm_args_t)]
    args = hgemm_args_t()  # null pointers: rejected before any CUDA call
    assert lib.hgemm_can_implement(ctypes.byref(args)) == HGEMM_ERR_INVALID_ARGS
    args.A = args.B = args.C = 1 << 20  # fake but aligned addresses; K = 511 is not a multiple of 8
    args.M, args.N, args.K, args.lda, args.ldb, args.ldc = 127, 256, 511, 511, 511 if cfg.b_layout == "col" else 256, 256
    assert lib.hgemm_can_implement(ctypes.byref(args)) == HGEMM_ERR_UNSUPPORTED

    # a fresh thread's launch cache counts nothing yet (the export exists; the counts are read without a GPU)
    from kernels.runtime import hgemm_cache_stats_t
    stats = hgemm_cache_stats_t(hits=7)
    lib.hgemm_cache_stats.argtypes = [ctypes.POINTER(hgemm_cache_stats_t)]
    lib.hgemm_cache_stats(ctypes.byref(stats))
    assert (stats.hits, stats.retargeted, stats.prepared, stats.retarget_checked, stats.retarget_refused) == (0,) * 5
