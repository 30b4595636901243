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
    after = mm["info"]["call_us_after"]  # per call split by what ran before: a graph replay (cold) or a call (warm)
    assert set(after) == {"kernel", "call"} and all(us and us > 0 for us in after.values())


def test_the_autotuning_baseline_records_the_identity_of_the_algorithm_it_kept():
    """What tuner.confirm writes into a table entry it makes from this baseline (config "algo"): the identity at the
    kept index of the list the dispatcher asks for."""
    import torch

    from kernels.dispatch import lt_identities_of
    from tuner.confirm import baseline_arm
    from tuner.evaluate import evaluate_shape
    from tuner.shapes import Shape

    torch.cuda.set_device(0)
    name = "cuBLASLt-auto-tuning-tn"
    rec = evaluate_shape(Shape(384, 1024, 768), "f32", warmup_seconds=0.05, benchmark_seconds=0.2, ours="none",
                         baseline_names=("torch.matmul", name))
    lt = rec["competitors"][name]
    assert lt["ok"] and lt["rel_err"] < 1e-3
    info = lt["info"]
    assert info["algo"] == lt_identities_of()(384, 1024, 768, "col", "f32")[info["algo_index"]]
    assert baseline_arm(name, info, "col")["config"]["algo"] == info["algo"]


def test_ours_records_the_cublaslt_algorithm_its_choice_runs():
    """What a grid stamps into a cuBLASLt choice without an identity (tuner.confirm): the identity at the index the
    dispatcher runs, in the list it asks for."""
    import torch

    from kernels.dispatch import Dispatcher, lt_identities_of
    from kernels.tuned_tables import TunedTable
    from tuner.competitors import ours_dispatcher

    torch.cuda.set_device(0)
    entry = {"m": 384, "n": 1024, "k": 768, "b_layout": "col", "kernel": "cublaslt",
             "config": {"kind": "lt_algo", "algo_index": 1}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0}}
    table = TunedTable.from_dict({"meta": {"arch": "sm90", "acc": "f32", "gpu": "test"}, "entries": [entry]})
    d = Dispatcher(tables={"f32": table}, arch="sm90", device=torch.device("cuda", 0))
    info = ours_dispatcher(384, 1024, 768, "col", "f32", dispatcher=d).info
    assert info["kernel"] == info["graph_kernel"] == "cublaslt"
    listed = lt_identities_of(0)(384, 1024, 768, "col", "f32")
    assert info["lt_algo"] == info["graph_lt_algo"] == {"algo_index": 1, "algo": listed[1]}


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


@pytest.mark.parametrize("acc", ["fp32", "fp16"])
def test_a_per_shape_variant_competes_as_ours_name_checked_and_timed(acc, tmp_path):
    """eval_one_file.sh --also_variants_per_shape: the sweep's file; the variant must be built (tables_row pack). An
    f16 run times the fp32-accumulating variant too (an f16 table may run it; session 18's f16 sweep skipped them)."""
    import json

    from kernels import space
    from kernels.build import find_built
    from tuner.eval_cli import main

    name = "sm90_f32_row_t64x128x64_c1x1_sauto_pp_pers_a8"
    if find_built(space.config_named(name)) is None:
        pytest.skip(f"{name} is not built (kernels.build --set tables_row)")
    (tmp_path / "v.txt").write_text(f"1024_2048_128 {name}\n")
    assert main(["--mnk", "1024_2048_128", "--acc_precise", acc, "--b_layout", "row", "--ours", "none",
                 "--baselines", "cuBLAS-nn", "--warmup_seconds", "0.05", "--benchmark_seconds", "0.2",
                 "--base_dir", str(tmp_path / "out"), "--gpu_device_id", "0", "--mode", "offline",
                 "--also_variants_per_shape", str(tmp_path / "v.txt")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    got = results["shapes"][0]["competitors"][f"ours:{name}"]
    assert got["ok"] and got["rel_err"] < 1e-3 and got["kernel_us"] > 0
    assert results["meta"]["also_variants_per_shape"] == {"1024_2048_128": [name]}
    assert results["shapes"][0]["host"] == results["meta"]["host"] != "unknown" and results["meta"]["host_cpu"]
    probe = results["meta"]["host_probe_us"]
    assert probe["tiny_op"] > probe["sync_only"] > 0
    import torch

    assert torch.is_grad_enabled()  # main times without autograd, scoped: the process's later tests keep grad


def test_call_anatomy_splits_every_competitors_call():
    import torch

    from tuner.call_anatomy import FLOORS, shape_anatomy

    torch.cuda.set_device(0)
    rec = shape_anatomy(256, 256, 256, "f32", "col", 0.05, 0.2, replays=False, fast_paths=("attributes", "off"))
    assert rec["failed"] == {}
    assert set(rec["parts_us"]) == {"ours", "torch.matmul", "cuBLAS-tn", *FLOORS, "ours[attributes]", "ours[off]"}
    for parts in rec["parts_us"].values():
        assert parts["host"] > 0 and parts["wait"] > 0 and parts["total"] >= parts["host"]
