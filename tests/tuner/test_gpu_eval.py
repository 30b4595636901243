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
