"""GPU correctness of every built variant of a set (HGEMM_TEST_SET: set names, comma-separated, default "smoke";
HGEMM_TEST_BUILD=1 builds the missing ones first, else they are skipped).

Error bound: the benchmark's, `tuner.correctness.tolerance` (relative Frobenius norm against an fp64 reference,
random normal inputs, fresh per test): acc=f32 1e-3; acc=f16 max(2e-3, 4 * 2^-12 * sqrt(K/16)), 0.022 at K=8192.
Zero-one inputs (K <= 2048: every partial sum is an integer that fp16 holds exactly) must match exactly.
Outputs are poisoned with NaN before every run, so an unwritten element fails.
"""
import os

import pytest

from kernels import runtime, space
from kernels.runtime import HGEMM_ERR_UNSUPPORTED, KernelLaunchError, KernelNotBuilt
from tuner.correctness import tolerance

pytestmark = pytest.mark.gpu

SET = os.environ.get("HGEMM_TEST_SET", "smoke")
CONFIGS = space.variant_sets(SET)  # "default,tables_row": every member of both, once
SHAPES = [  # (M, N, K)
    (1, 8, 8), (16, 16, 16),                  # tiny
    (64, 4096, 64), (4096, 64, 128), (8, 1024, 512),  # skinny
    (128, 256, 8192),                         # long K
    (127, 256, 512), (1000, 1032, 1048),      # M/N/K not multiples of the tile
    (2048, 2048, 2048),                       # large
]


def tol(cfg, k):
    return tolerance(cfg.acc, k)


@pytest.fixture(scope="module")
def torch():
    import torch as t
    t.manual_seed(1234)
    return t


def kernel_for(cfg):
    try:
        return runtime.load(cfg, build_if_missing=os.environ.get("HGEMM_TEST_BUILD") == "1")
    except KernelNotBuilt as exc:
        pytest.skip(str(exc))


def operands(torch, cfg, m, n, k, kind="normal"):
    shape_b = (n, k) if cfg.b_layout == "col" else (k, n)
    if kind == "normal":
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(*shape_b, device="cuda", dtype=torch.float16)
    else:  # zero-one
        a = torch.randint(0, 2, (m, k), device="cuda").half()
        b = torch.randint(0, 2, shape_b, device="cuda").half()
    return a, b


def reference(cfg, a, b):
    bd = b.double()
    return a.double() @ (bd.t() if cfg.b_layout == "col" else bd)


def poisoned(torch, m, n):
    return torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)


def rel_err(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("m, n, k", SHAPES, ids=lambda v: str(v))
def test_random_normal_matches_fp64(torch, cfg, m, n, k):
    kernel = kernel_for(cfg)
    assert space.supports(cfg, m, n, k)
    a, b = operands(torch, cfg, m, n, k)
    out = poisoned(torch, m, n)
    kernel(a, b, out)
    torch.cuda.synchronize()
    assert not out.isnan().any(), "unwritten (NaN-poisoned) outputs remain"
    err = rel_err(out, reference(cfg, a, b))
    assert err <= tol(cfg, k), f"relative Frobenius error {err:.2e} > {tol(cfg, k):.2e}"


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("m, n, k", [(256, 384, 2048), (64, 4096, 64), (33, 72, 40)], ids=lambda v: str(v))
def test_zero_one_inputs_are_exact(torch, cfg, m, n, k):
    kernel = kernel_for(cfg)
    a, b = operands(torch, cfg, m, n, k, kind="zero-one")
    out = poisoned(torch, m, n)
    kernel(a, b, out)
    torch.cuda.synchronize()
    assert torch.equal(out.double(), reference(cfg, a, b))


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_runtime_knobs_keep_results_right(torch, cfg):
    kernel = kernel_for(cfg)
    m, n, k = 512, 768, 4096
    a, b = operands(torch, cfg, m, n, k)
    ref = reference(cfg, a, b)
    knobs = space.runtime_knobs(cfg)
    combos = [dict(raster=r, swizzle=s) for r in knobs["raster"] for s in knobs["swizzle"]]
    combos += [dict(splits=s) for s in knobs["splits"] if s > 1]
    for combo in combos:
        out = poisoned(torch, m, n)
        kernel(a, b, out, **combo)
        torch.cuda.synchronize()
        assert not out.isnan().any(), combo
        assert rel_err(out, ref) <= tol(cfg, k), combo


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_unsupported_knobs_and_unaligned_shapes_are_refused(torch, cfg):
    kernel = kernel_for(cfg)
    m, n, k = 127, 255, 511
    assert not space.supports(cfg, m, n, k)  # the dispatcher pads or routes these elsewhere
    a, b = operands(torch, cfg, m, n, k)
    with pytest.raises(KernelLaunchError) as info:
        kernel(a, b, poisoned(torch, m, n))
    assert info.value.status == HGEMM_ERR_UNSUPPORTED
    bad_knob = dict(swizzle=2) if cfg.family == "sm80" else dict(raster=7)
    a, b = operands(torch, cfg, 64, 64, 64)
    with pytest.raises(KernelLaunchError):
        kernel(a, b, poisoned(torch, 64, 64), **bad_knob)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_strided_operands(torch, cfg):
    kernel = kernel_for(cfg)
    m, n, k = 200, 136, 264
    big_a = torch.randn(m, k + 16, device="cuda", dtype=torch.float16)
    a = big_a[:, 8:8 + k]  # lda = k + 16, base offset 16 bytes
    b = operands(torch, cfg, m, n, k)[1]
    big_out = torch.full((m, n + 24), float("nan"), device="cuda", dtype=torch.float16)
    out = big_out[:, :n]
    kernel(a, b, out)
    torch.cuda.synchronize()
    assert rel_err(out, reference(cfg, a, b)) <= tol(cfg, k)
    assert big_out[:, n:].isnan().all(), "wrote outside C"


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_cuda_graph_replay_equals_eager(torch, cfg):
    kernel = kernel_for(cfg)
    m, n, k = 384, 512, 1536
    a, b = operands(torch, cfg, m, n, k)
    eager = poisoned(torch, m, n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernel(a, b, eager)  # warm-up on the capture stream (workspace allocated outside the capture)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    captured = poisoned(torch, m, n)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        kernel(a, b, captured)
    captured.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, eager)
    # new data in the same buffers: the replay recomputes
    a.copy_(torch.randn_like(a))
    graph.replay()
    torch.cuda.synchronize()
    assert rel_err(captured, reference(cfg, a, b)) <= tol(cfg, k)


@pytest.mark.parametrize("cfg", CONFIGS[:2], ids=lambda c: c.name)
def test_launches_on_the_current_stream(torch, cfg):
    """The launch goes to torch's current stream (graph capture above would fail otherwise; this checks the handle)."""
    kernel = kernel_for(cfg)
    a, b = operands(torch, cfg, 256, 256, 256)
    out = poisoned(torch, 256, 256)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernel(a, b, out)
        assert kernel._local.args.stream == stream.cuda_stream
    stream.synchronize()
    assert rel_err(out, reference(cfg, a, b)) <= tol(cfg, 256)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_back_to_back_dependent_gemms_see_each_others_results(torch, cfg):
    """A chain of tiny GEMMs ping-ponging between two buffers, each reading what the previous one wrote and
    overwriting what the one before it read, with a torch kernel in the middle: the case programmatic dependent
    launch (pdl variants) must get right. Each B is a permutation matrix, so every step is exact and any read of
    unfinished (NaN-poisoned) or stale data shows. Eager, then replayed from a CUDA graph, twice."""
    kernel = kernel_for(cfg)
    m, n, steps = 64, 256, 12
    perms = [torch.randperm(n, device="cuda") for _ in range(steps)]
    eye = torch.eye(n, device="cuda", dtype=torch.float16)
    # out = x @ P: col layout takes B as N×K (Pᵀ), row layout as K×N (P)
    weights = [eye[:, p].t().contiguous() if cfg.b_layout == "col" else eye[:, p].contiguous() for p in perms]
    x0 = torch.randn(m, n, device="cuda", dtype=torch.float16)
    expected = x0.clone()
    for i, p in enumerate(perms):
        expected = expected[:, p]
        if i == steps // 2:
            expected = -expected

    def chain(buffers):
        for i, w in enumerate(weights):
            kernel(buffers[i % 2], w, buffers[(i + 1) % 2])
            if i == steps // 2:
                buffers[(i + 1) % 2].neg_()  # a torch kernel between two of ours
        return buffers[steps % 2]

    def fresh():
        return [x0.clone(), poisoned(torch, m, n)]

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # eager on the capture stream (workspace allocated outside the capture)
        assert torch.equal(chain(fresh()), expected)
    buffers = fresh()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        result = chain(buffers)
    for _ in range(2):
        buffers[0].copy_(x0)
        buffers[1].fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(result, expected)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_moving_operands_retarget_the_prepared_launch(torch, cfg):
    """Callers rotate buffers (the caching allocator, a server's requests, the per-call benchmark): the launch cache
    keys on everything but the pointers and retargets a prepared launch to the call's operands (sm90: the TMA
    descriptors' addresses). More operand sets than the cache has slots, two shapes interleaved, every call poisoned
    and checked against fp64; a graph captured before the moves still replays its own operands."""
    kernel = kernel_for(cfg)
    shapes = [(192, 256, 512), (64, 384, 1024)]
    splits = max(s for s in space.runtime_knobs(cfg)["splits"] if s <= 4)  # > 1: split/stream-K workspaces too
    sets = {shape: [operands(torch, cfg, *shape) for _ in range(20)] for shape in shapes}
    refs = {shape: [reference(cfg, a, b) for a, b in sets[shape]] for shape in shapes}
    before = kernel.cache_stats()
    for rnd in range(2):
        for i in range(20):
            for shape in shapes:
                m, n, k = shape
                a, b = sets[shape][i]
                out = poisoned(torch, m, n)
                kernel(a, b, out, splits=splits if rnd else 0)
                torch.cuda.synchronize()
                assert not out.isnan().any(), (shape, i, rnd)
                assert rel_err(out, refs[shape][i]) <= tol(cfg, k), (shape, i, rnd)
    after = kernel.cache_stats()
    moved = {key: after[key] - before[key] for key in after}
    assert moved["retarget_refused"] == 0, moved
    assert moved["retarget_checked"] >= 1 and moved["retargeted"] >= 60, moved

    m, n, k = shapes[0]
    (a0, b0), out0 = sets[shapes[0]][0], poisoned(torch, m, n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        kernel(a0, b0, out0)  # warm-up on the capture stream
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=stream):
        kernel(a0, b0, out0)
    for i in (1, 2, 3):  # eager calls retarget the entry the capture used
        a, b = sets[shapes[0]][i]
        out = poisoned(torch, m, n)
        kernel(a, b, out)
    out0.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert rel_err(out0, refs[shapes[0]][0]) <= tol(cfg, k)


SPLITK = [c for c in CONFIGS if c.family == "splitk" and c.schedule in ("", "cooperative")]
SPLITK_CLUSTER = [c for c in CONFIGS if c.family == "splitk" and c.schedule == "cluster"]


@pytest.mark.parametrize("cfg", SPLITK, ids=lambda c: c.name)
def test_split_scratch_is_left_zeroed_across_shapes_splits_streams_and_graphs(torch, cfg):
    """splitk variants (KernelTma and cooperative) reduce their K splits in a scratch buffer that must be zero before
    every launch: the last CTA of each tile clears it. Shapes and split counts alternate on one stream (a leftover
    would add into the next result), then launches alternate between two streams running at once (one scratch per
    stream), then a graph is captured on a stream never used before (its scratch allocated and zeroed during the
    capture), replayed with new data, and that stream used eagerly after it."""
    kernel = kernel_for(cfg)
    shapes = [(128, 256, 4096), (192, 320, 2048), (64, 64, 8192)]  # partial tiles along M and N in the second
    if cfg.schedule == "cooperative":  # persistent: more tiles x splits than CTAs, each CTA reduces several in turn
        shapes.append((1024, 1152, 4096))
    for _ in range(2):
        for m, n, k in shapes:
            for splits in (2, 8, 32, 0):
                a, b = operands(torch, cfg, m, n, k)
                out = poisoned(torch, m, n)
                kernel(a, b, out, splits=splits)
                torch.cuda.synchronize()
                assert not out.isnan().any(), (m, n, k, splits)
                assert rel_err(out, reference(cfg, a, b)) <= tol(cfg, k), (m, n, k, splits)

    two_streams_then_a_capture(torch, cfg, kernel, *shapes[0], stream_splits=(16,), graph_splits=8)


def two_streams_then_a_capture(torch, cfg, kernel, m, n, k, stream_splits, graph_splits):
    """Split launches alternating between two streams running at once (split counts cycling through stream_splits),
    then a graph captured on a stream never used before, replayed twice with new data, and that stream used eagerly
    after it; every result against fp64."""
    jobs = [(*operands(torch, cfg, m, n, k), poisoned(torch, m, n)) for _ in range(8)]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for i, (a, b, out) in enumerate(jobs):
        with torch.cuda.stream(streams[i % 2]):
            kernel(a, b, out, splits=stream_splits[i % len(stream_splits)])
    torch.cuda.synchronize()
    for a, b, out in jobs:
        assert rel_err(out, reference(cfg, a, b)) <= tol(cfg, k)

    a, b = operands(torch, cfg, m, n, k)
    captured = poisoned(torch, m, n)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        kernel(a, b, captured, splits=graph_splits)
    for _ in range(2):
        a.copy_(torch.randn_like(a))
        captured.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(captured, reference(cfg, a, b)) <= tol(cfg, k)
    eager = poisoned(torch, m, n)
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernel(a, b, eager, splits=graph_splits)
    stream.synchronize()
    assert rel_err(eager, reference(cfg, a, b)) <= tol(cfg, k)


STREAMK = [c for c in CONFIGS if c.family == "sm90" and c.scheduler == "streamk"]


@pytest.mark.parametrize("cfg", STREAMK, ids=lambda c: c.name)
def test_a_graph_keeps_its_workspace_after_the_stream_outgrows_it(torch, cfg):
    """A graph replays the workspace pointer its launch was captured with. When the stream's workspace
    (runtime._workspace) is outgrown and the launcher has moved to another stream, nothing else refers to the old
    buffer: freed, the caching allocator would give its block to the next tensor on that stream, and every replay
    would write the stream-K reduction into that tensor."""
    kernel = kernel_for(cfg)
    m, n, k = 256, 256, 16384  # 4 output tiles of 128x128 on 132 SMs and a long K: stream-K splits K
    a, b = operands(torch, cfg, m, n, k)
    captured = poisoned(torch, m, n)
    if kernel.workspace_bytes(a, b, captured) == 0:
        pytest.skip(f"{cfg.name} needs no workspace for {m}x{n}x{k}")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernel(a, b, captured)  # warm-up: the stream's workspace comes from the ordinary pool, not the graph's
    stream.synchronize()
    key = (a.get_device(), stream.cuda_stream)
    held = runtime._workspaces[key]
    ptr, size = held.data_ptr(), held.numel()
    del held
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        kernel(a, b, captured)
    runtime._workspace(*key, 2 * size)  # outgrown, as a larger stream-K problem or a cuBLAS arm on it would
    kernel(a, b, poisoned(torch, m, n))  # the launcher binds the default stream's workspace: no reference left
    with torch.cuda.stream(stream):
        bystander = torch.full((size,), 0x5A, dtype=torch.uint8, device="cuda")
    stream.synchronize()
    assert bystander.data_ptr() != ptr
    a.copy_(torch.randn_like(a))
    captured.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert bool((bystander == 0x5A).all())
    assert rel_err(captured, reference(cfg, a, b)) <= tol(cfg, k)


@pytest.mark.parametrize("cfg", SPLITK_CLUSTER, ids=lambda c: c.name)
def test_cluster_splits_reduce_every_row_of_partial_tiles(torch, cfg):
    """splitk cluster variants: the S splits of a tile are one cluster's CTAs, each reducing 1/S of the tile's rows
    from all S partials in distributed shared memory. Every split count on tiles cut by M and N, a K whose split is
    not a whole number of k-tiles, a split of one k-tile; then several clusters' launches on two streams at once and
    a graph capture (the cluster and PDL launch attributes go into the graph node). A split count the variant cannot
    run (not a power of two, a cluster of > 16 CTAs) is refused, not run. Multicast variants (clusters of 2 or 4
    M-tiles sharing B) also run without splits, and on M-tile counts that are not whole clusters (192 and 100 rows)."""
    kernel = kernel_for(cfg)
    max_splits = 16 // cfg.cluster[0]
    shapes = [(192, 320, 2048), (128, 256, 4160), (100, 72, 1024), (64, 64, 16384)]
    for m, n, k in shapes:
        for splits in (2, 4, 8, 16, 0):
            if k % (8 * max(splits, 1)) or splits > max_splits:
                continue
            a, b = operands(torch, cfg, m, n, k)
            out = poisoned(torch, m, n)
            kernel(a, b, out, splits=splits)
            torch.cuda.synchronize()
            assert not out.isnan().any(), (m, n, k, splits)
            assert rel_err(out, reference(cfg, a, b)) <= tol(cfg, k), (m, n, k, splits)
    a, b = operands(torch, cfg, 256, 384, 2048, kind="zero-one")
    out = poisoned(torch, 256, 384)
    kernel(a, b, out, splits=max_splits)
    torch.cuda.synchronize()
    assert torch.equal(out.double(), reference(cfg, a, b))

    m, n, k = 256, 512, 4096
    two_streams_then_a_capture(torch, cfg, kernel, m, n, k, stream_splits=(max_splits // 2, max_splits),
                               graph_splits=max_splits)

    a, b = operands(torch, cfg, m, n, k)
    for bad in (3, 2 * max_splits):
        with pytest.raises(KernelLaunchError) as info:
            kernel(a, b, poisoned(torch, m, n), splits=bad)
        assert info.value.status == HGEMM_ERR_UNSUPPORTED
