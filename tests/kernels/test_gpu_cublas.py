"""cuBLAS / cuBLASLt arms and the dispatcher on a real GPU (run on the H200: `pytest -m gpu tests/kernels`).

Every check runs on fresh random inputs with the output poisoned with NaN first (so an arm that returns without
writing C fails), against an fp64 reference, as relative Frobenius error:
  the benchmark's bound, `tuner.correctness.tolerance`: acc=f32 1e-3 (two fp16 roundings of the result give
  ~3e-4); acc=f16 max(2e-3, 4 * 2^-12 * sqrt(K/16)), 0.016 at K=4096 -- a wrong kernel is off by O(1)
plus the zero-one test (inputs in {0, 1}, K <= 2048: every partial sum is an integer <= 2048, exact in fp16, so C
must equal the reference exactly for both accumulators), both B layouts, CUDA-graph capture == eager, and the
invalid-descriptor path (fp16 scale type with fp32 compute) raising instead of "running" in zero time.
"""
from __future__ import annotations

import pytest
import torch

import kernels
from kernels.cublas import CUDA_R_16F, CublasArm, CublasError, lt_algorithms
from kernels.dispatch import Dispatcher, canary_tolerance
from tuner.correctness import tolerance as bound

pytestmark = pytest.mark.gpu

SHAPES = [  # (M, N, K): tiny, odd, small-skinny, unaligned, skinny, long-K, large
    (1, 1, 1), (7, 13, 5), (64, 4096, 64), (127, 255, 511), (1, 4096, 4096), (64, 64, 16384), (2048, 2048, 2048)]
ZERO_ONE_SHAPES = [(7, 13, 5), (127, 255, 511), (64, 4096, 64), (256, 256, 2048)]
ARMS = [  # (kind, algo_index, layouts it takes)
    ("gemmex", 0, ("row", "col")), ("gemmex_tn", 0, ("col",)), ("gemmex_nn", 0, ("row",)),
    ("lt_heuristic", 0, ("row", "col")), ("lt_algo", 0, ("row", "col")), ("lt_implicit", 0, ("row", "col"))]
ARM_CASES = [(kind, index, layout) for kind, index, layouts in ARMS for layout in layouts]


def operands(m, n, k, b_layout, seed=0, zero_one=False):
    g = torch.Generator(device="cuda").manual_seed(seed)
    b_shape = (k, n) if b_layout == "row" else (n, k)
    if zero_one:
        a = torch.randint(0, 2, (m, k), device="cuda", generator=g).half()
        b = torch.randint(0, 2, b_shape, device="cuda", generator=g).half()
    else:
        a = torch.randn(m, k, device="cuda", generator=g).half()
        b = torch.randn(*b_shape, device="cuda", generator=g).half()
    return a, b


def reference(a, b, b_layout):
    return a.double() @ (b.double() if b_layout == "row" else b.double().t())


def poisoned(m, n):
    return torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)


def rel_err(out, ref) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


def check(out, ref, acc, k, what=""):
    assert torch.isfinite(out).all(), f"{what}: output has NaN/Inf (not written, or overflow)"
    err = rel_err(out, ref)
    assert err <= bound(acc, k), f"{what}: relative Frobenius error {err:.3g} > {bound(acc, k):.3g}"


# ---- the arms ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("m, n, k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
@pytest.mark.parametrize("kind, index, b_layout", ARM_CASES, ids=[f"{k}-{l}" for k, _, l in ARM_CASES])
def test_arm_matches_fp64_reference(kind, index, b_layout, m, n, k, acc):
    arm = CublasArm(kind, index)
    for seed in range(2):
        a, b = operands(m, n, k, b_layout, seed)
        out = arm(a, b, poisoned(m, n), b_layout=b_layout, acc=acc)
        torch.cuda.synchronize()
        check(out, reference(a, b, b_layout), acc, k, f"{arm} {m}x{n}x{k} {b_layout} {acc}")


@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("m, n, k", ZERO_ONE_SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in ZERO_ONE_SHAPES])
@pytest.mark.parametrize("kind, index, b_layout", ARM_CASES, ids=[f"{k}-{l}" for k, _, l in ARM_CASES])
def test_arm_zero_one_is_exact(kind, index, b_layout, m, n, k, acc):
    a, b = operands(m, n, k, b_layout, seed=7, zero_one=True)
    out = CublasArm(kind, index)(a, b, poisoned(m, n), b_layout=b_layout, acc=acc)
    expected = reference(a, b, b_layout).half()
    assert torch.equal(out, expected), f"{kind} {b_layout} {acc}: {int((out != expected).sum())} wrong elements"


@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_every_autotuning_algorithm_is_correct(b_layout, acc):
    m, n, k = 384, 1024, 768
    algos = lt_algorithms(m, n, k, b_layout, acc, top_n=32)
    assert algos, "the cuBLASLt heuristic returned no algorithm"
    assert [x.index for x in algos] == list(range(len(algos)))
    a, b = operands(m, n, k, b_layout)
    ref = reference(a, b, b_layout)
    for algo in algos:
        out = CublasArm("lt_algo", algo.index)(a, b, poisoned(m, n), b_layout=b_layout, acc=acc)
        check(out, ref, acc, k, f"lt_algo[{algo.index}] {algo}")
    if len(algos) < 32:  # an index past the list is an error, not a no-op
        with pytest.raises(CublasError, match="status -2"):
            CublasArm("lt_algo", len(algos))(a, b, poisoned(m, n), b_layout=b_layout, acc=acc)


@pytest.mark.parametrize("kind", ["lt_heuristic", "lt_implicit"])
def test_invalid_descriptor_raises_and_leaves_c_untouched(kind):
    """fp16 scale type with fp32 compute is not a valid cuBLASLt combination: the call must fail loudly."""
    m = n = k = 256
    a, b = operands(m, n, k, "row")
    out = poisoned(m, n)
    with pytest.raises(CublasError) as info:
        CublasArm(kind, scale_type_override=CUDA_R_16F)(a, b, out, b_layout="row", acc="f32")
        torch.cuda.synchronize()
    assert info.value.status != 0
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "the failing call wrote C"


def test_layout_restricted_forms_refuse_the_other_layout():
    a, b = operands(64, 64, 64, "row")
    with pytest.raises(ValueError, match="gemmex_tn"):
        CublasArm("gemmex_tn")(a, b, poisoned(64, 64), b_layout="row")
    with pytest.raises(ValueError, match="gemmex_nn"):
        CublasArm("gemmex_nn")(a, b, poisoned(64, 64), b_layout="col")


def test_unaligned_views_are_handled():
    """Operands at odd (2-byte aligned) addresses: cuBLASLt must be planned for that alignment, not 256."""
    m, n, k = 63, 65, 67
    base_a, base_b = operands(m + 1, n + 1, k * 2, "col")
    a = base_a.flatten()[1:1 + m * k].view(m, k)
    b = base_b.flatten()[3:3 + n * k].view(n, k)
    for kind in ("gemmex", "lt_heuristic", "lt_implicit"):
        out_base = poisoned(1, m * n + 1).flatten()
        out = out_base[1:].view(m, n)
        CublasArm(kind)(a, b, out, b_layout="col", acc="f32")
        check(out, reference(a, b, "col"), "f32", k, kind)


@pytest.mark.parametrize("kind, index", [("gemmex", 0), ("lt_heuristic", 0), ("lt_algo", 1), ("lt_implicit", 0)])
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_cuda_graph_replay_equals_eager(kind, index, b_layout):
    m, n, k = 256, 384, 512
    arm = CublasArm(kind, index)
    a, b = operands(m, n, k, b_layout, seed=1)
    out = poisoned(m, n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm up on the capture stream: handles, plans and workspace exist before capture
        arm(a, b, out, b_layout=b_layout, acc="f32")
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        arm(a, b, out, b_layout=b_layout, acc="f32")
    for seed in (2, 3):
        new_a, new_b = operands(m, n, k, b_layout, seed)
        a.copy_(new_a)
        b.copy_(new_b)
        out.fill_(float("nan"))
        graph.replay()
        eager = arm(a, b, poisoned(m, n), b_layout=b_layout, acc="f32")
        torch.cuda.synchronize()
        check(out, reference(a, b, b_layout), "f32", k, f"graph {kind}")
        assert torch.equal(out, eager), f"{kind}: graph replay differs from eager"


# ---- the dispatcher end to end ----------------------------------------------------------------------------------
@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("m, n, k", [(127, 255, 511), (64, 4096, 64), (1, 1, 1)])
def test_public_gemm(m, n, k, b_layout, acc):
    a, b = operands(m, n, k, b_layout, seed=5)
    out = kernels.gemm(a, b, b_layout=b_layout, acc=acc, out=poisoned(m, n))
    torch.cuda.synchronize()
    check(out, reference(a, b, b_layout), acc, k, "kernels.gemm")
    sel = kernels.get_dispatcher().select(m, n, k, b_layout, acc)
    assert sel.fallback is None or sel.fallback in kernels.FALLBACK_REASONS


def _built_smoke_variant(acc, b_layout):
    """A smoke-set variant that is built on this machine (None if none is): dispatch never compiles."""
    from kernels import runtime, space
    from kernels.runtime import KernelNotBuilt

    for cfg in space.variant_set("smoke"):
        if cfg.acc == acc and cfg.b_layout == b_layout:
            try:
                runtime.load(cfg, build_if_missing=False)
                return cfg
            except KernelNotBuilt:
                continue
    return None


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_dispatcher_pads_an_unaligned_shape_for_a_tuned_variant(b_layout):
    from kernels.tuned_tables import TunedTable

    cfg = _built_smoke_variant("f32", b_layout)
    if cfg is None:
        pytest.skip("no smoke variant built here (python -m kernels.build --set smoke)")
    m, n, k = 127, 255, 511
    t = TunedTable.from_dict({"meta": {"arch": "sm90", "acc": "f32"}, "entries": [
        {"m": m, "n": n, "k": k, "b_layout": b_layout, "kernel": cfg.name, "config": cfg.to_dict()}]})
    events = []
    d = Dispatcher.default(tables={"f32": t}, canary_rate=1.0, on_event=events.append)
    for seed in range(3):
        a, b = operands(m, n, k, b_layout, seed)
        out, sel = d.run(a, b, b_layout, "f32", out=poisoned(m, n))
        torch.cuda.synchronize()
        check(out, reference(a, b, b_layout), "f32", k, sel.kernel)
        assert (sel.kernel, sel.fallback, sel.padded) == (cfg.name, None, (m, 256, 512))
    assert [e.ok for e in events if e.kind == "canary"] == [True] * 3 and d.quarantined() == {}


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_dispatcher_cuda_graph_replay_equals_eager(b_layout):
    """Through cuBLAS, or -- when a smoke variant is built -- through that variant on padded buffers."""
    from kernels.tuned_tables import TunedTable

    m, n, k = 127, 255, 511
    cfg = _built_smoke_variant("f32", b_layout)
    entries = [] if cfg is None else [
        {"m": m, "n": n, "k": k, "b_layout": b_layout, "kernel": cfg.name, "config": cfg.to_dict()}]
    d = Dispatcher.default(tables={"f32": TunedTable.from_dict({"meta": {"arch": "sm90", "acc": "f32"},
                                                                "entries": entries})})
    a, b = operands(m, n, k, b_layout, seed=11)
    out = poisoned(m, n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm up on the capture stream (padding buffers are per stream)
        _, sel = d.run(a, b, b_layout, out=out)
    stream.synchronize()
    assert sel.padded == (None if cfg is None else (m, 256, 512))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        d.gemm(a, b, b_layout, out=out)
    new_a, new_b = operands(m, n, k, b_layout, seed=12)
    a.copy_(new_a)
    b.copy_(new_b)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check(out, reference(a, b, b_layout), "f32", k, f"dispatcher graph via {sel.kernel}")
    assert torch.equal(out, d.gemm(a, b, b_layout))


def test_canary_tolerance_admits_correct_f16_results():
    """The canary's f16 bound must not flag cuBLAS against itself-like differences (GemmEx vs cuBLASLt)."""
    for m, n, k in [(64, 64, 16384), (1024, 1024, 4096)]:
        a, b = operands(m, n, k, "col", seed=3)
        x = CublasArm("gemmex")(a, b, poisoned(m, n), b_layout="col", acc="f16")
        y = CublasArm("lt_heuristic")(a, b, poisoned(m, n), b_layout="col", acc="f16")
        assert rel_err(x, y.double()) <= canary_tolerance("f16", k)
