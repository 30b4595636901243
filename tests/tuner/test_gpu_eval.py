"""On the H200: the benchmark of one shape end to end (correctness, both timings), torch.matmul vs cuBLAS arms."""
import pytest

pytestmark = pytest.mark.gpu


def test_evaluate_one_shape_both_timings():
    import torch

    from tuner.evaluate import evaluate_shape
    from tuner.shapes import Shape

    torch.cuda.set_device(0)
    rec = evaluate_shape(Shape(256, 512, 1024), "f32", warmup_seconds=0.1, benchmark_seconds=0.3, ours="none",
                         baseline_names=("torch.matmul", "cuBLAS-tn"))
    mm = rec["competitors"]["torch.matmul"]
    assert mm["ok"] and mm["rel_err"] < 1e-3
    assert mm["kernel_us"] > 0 and mm["call_us"] >= mm["kernel_us"] * 0.5


def test_graph_sampler_times_torch_matmul():
    import torch

    from tuner.timing import GraphSampler

    a = [torch.randn(512, 512, device="cuda", dtype=torch.half) for _ in range(4)]
    b = [torch.randn(512, 512, device="cuda", dtype=torch.half) for _ in range(4)]
    out = [torch.empty(512, 512, device="cuda", dtype=torch.half) for _ in range(4)]
    s = GraphSampler(lambda x, y, o: torch.matmul(x, y, out=o), list(zip(a, b, out)))
    assert s.method == "graph" and 0 < s() < 1000


def test_a_competitor_that_computes_differently_when_captured_fails_its_check():
    import torch

    from tuner.competitors import Competitor
    from tuner.evaluate import evaluate_shape
    from tuner.shapes import Shape

    def liar(a, b, out):  # right eagerly, wrong in the graph that kernel-only timing replays
        torch.matmul(a, b, out=out)
        if torch.cuda.is_current_stream_capturing():
            out.mul_(0.5)

    rec = evaluate_shape(Shape(128, 256, 512), "f32", warmup_seconds=0.05, benchmark_seconds=0.1, ours="none",
                         baseline_names=("torch.matmul",), extra=[Competitor("liar", liar, "row")])
    assert rec["competitors"]["torch.matmul"]["ok"]
    liar_rec = rec["competitors"]["liar"]
    assert not liar_rec["ok"] and "replayed from a CUDA graph" in liar_rec["reason"]
