"""Summary maths on hand-made results with known answers, through the files an eval run writes."""
import json
import math

import pytest

from tuner import summary
from tuner.correctness import CheckResult
from tuner.results import competitor_record, shape_record, speedups, write_results
from tuner.shapes import Shape, bucket_of


def test_buckets_split_at_1e9_and_1e11():
    assert bucket_of(0.99e9) == "<1e9" and bucket_of(1e9) == "1e9-1e11"
    assert bucket_of(0.99e11) == "1e9-1e11" and bucket_of(1e11) == ">1e11"


def test_geomean():
    assert summary.geomean([2, 8]) == pytest.approx(4.0)
    assert math.isnan(summary.geomean([]))
    with pytest.raises(ValueError):
        summary.geomean([1.0, 0.0])


def _record(shape, ours_us, theirs):
    ok = CheckResult(True, 1e-4, 0.0)
    comps = {"ours": competitor_record(shape, ok, {"kernel": ours_us, "call": 2 * ours_us})}
    for name, us in theirs.items():
        comps[name] = competitor_record(shape, ok, {"kernel": us, "call": us})
    return shape_record(shape, comps)


def test_speedups_include_the_stronger_of_tn_and_nn():
    comps = {"ours": {"kernel_us": 10.0}, "cuBLAS-tn": {"kernel_us": 20.0}, "cuBLAS-nn": {"kernel_us": 15.0}}
    s = speedups(comps, "kernel")
    assert s == {"cuBLAS-tn": 2.0, "cuBLAS-nn": 1.5, "cuBLAS-max": 1.5}


def test_geomean_by_bucket_from_written_results(tmp_path):
    small1, small2 = Shape(64, 64, 64), Shape(64, 64, 128)  # 5.2e5, 1.0e6 FLOP
    mid = Shape(1024, 1024, 1024)  # 2.1e9
    big1, big2 = Shape(4096, 4096, 4096), Shape(8192, 4096, 4096)  # 1.4e11, 2.7e11
    records = [_record(small1, 1.0, {"torch.matmul": 2.0}), _record(small2, 1.0, {"torch.matmul": 8.0}),
               _record(mid, 2.0, {"torch.matmul": 3.0}), _record(big1, 4.0, {"torch.matmul": 2.0}),
               _record(big2, 1.0, {"torch.matmul": 2.0})]
    paths = write_results(tmp_path, records, {"gpu": "test"})
    rows = summary.speedup_rows_from_long(summary.read_long_csv(paths["csv"]))
    table = summary.by_bucket(rows)
    k = table["kernel"]["torch.matmul"]
    assert k["<1e9"]["geomean"] == pytest.approx(4.0) and k["<1e9"]["n"] == 2
    assert k["1e9-1e11"]["geomean"] == pytest.approx(1.5)
    assert k[">1e11"]["geomean"] == pytest.approx(1.0)  # 0.5 and 2.0
    assert k["all"]["geomean"] == pytest.approx((2 * 8 * 1.5 * 0.5 * 2) ** 0.2)
    c = table["call"]["torch.matmul"]  # ours' call time is twice its kernel time: every speedup halves
    assert c["all"]["geomean"] == pytest.approx(k["all"]["geomean"] / 2)
    worst = summary.worst(rows, "kernel", "torch.matmul", 2)
    assert [w["mnk"] for w in worst] == [big1.mnk, mid.mnk]
    assert [k[x]["below_floor"] for x in ("<1e9", "1e9-1e11", ">1e11", "all")] == [0, 0, 1, 1]  # big1 at 0.5x
    assert c["all"]["below_floor"] == 2  # halved: 1.5x -> 0.75x joins 0.5x -> 0.25x
    assert "| torch.matmul | 0 of 2 | 0 of 1 | 1 of 2 | 1 of 5 |" in summary.format_summary(table)


def _run_with_gzipped_copies(tmp_path) -> dict:
    """A two-shape run's files, and results.csv.gz / results.json.gz beside them (how grid runs are committed)."""
    import gzip
    import shutil

    records = [_record(Shape(64, 64, 64), 1.0, {"torch.matmul": 2.0}), _record(Shape(128, 64, 64), 3.0, {})]
    paths = write_results(tmp_path, records, {"gpu": "test"})
    for kind in ("csv", "json"):
        with open(paths[kind], "rb") as src, gzip.open(tmp_path / f"results.{kind}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    return paths


def test_a_gzipped_results_csv_reads_as_the_plain_one(tmp_path):
    paths = _run_with_gzipped_copies(tmp_path)
    plain = summary.read_long_csv(paths["csv"])
    assert len(plain) == 3 and summary.read_long_csv(tmp_path / "results.csv.gz") == plain


def test_the_results_json_reads_as_its_csv(tmp_path):
    paths = _run_with_gzipped_copies(tmp_path)
    plain = summary.read_long_csv(paths["csv"])
    assert summary.read_long_csv(paths["json"]) == plain == summary.read_long_csv(tmp_path / "results.json.gz")


def test_cli_writes_summary_and_plots(tmp_path):
    records = [_record(Shape(64, 64, 64), 1.0, {"torch.matmul": 2.0, "cuBLAS-tn": 1.0, "cuBLAS-nn": 4.0}),
               _record(Shape(4096, 4096, 4096), 4.0, {"torch.matmul": 2.0, "cuBLAS-tn": 5.0, "cuBLAS-nn": 6.0})]
    paths = write_results(tmp_path / "run", records, {"gpu": "NVIDIA H200", "commit": "abc1234", "acc": "f32",
                                                      "argv": ["not", "repeated"]})
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "s")]) == 0
    data = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert data["meta"] == {"gpu": "NVIDIA H200", "commit": "abc1234", "acc": "f32"}  # where and how it was measured
    assert "gpu: NVIDIA H200\ncommit: abc1234\n" in (tmp_path / "s" / "summary.md").read_text()
    assert data["by_bucket"]["kernel"]["cuBLAS-max"]["all"]["geomean"] == pytest.approx(math.sqrt(1.0 * 1.25))
    assert (tmp_path / "s" / "speedup_by_bucket.png").stat().st_size > 0
    assert (tmp_path / "s" / "tflops_vs_flop.png").stat().st_size > 0


def test_the_summary_names_competitors_whose_kernel_figures_came_from_event_timing(tmp_path):
    def timed(shape, methods):
        ok = CheckResult(True, 1e-4, 0.0)
        return shape_record(shape, {name: competitor_record(shape, ok, {"kernel": 1.0, "call": 1.0},
                                                            {"kernel_method": method})
                                    for name, method in methods.items()})

    records = [timed(Shape(64, 64, 64), {"ours": "graph", "torch.matmul": "graph"}),
               timed(Shape(128, 64, 64), {"ours": "events", "torch.matmul": "graph"})]
    paths = write_results(tmp_path / "run", records, {"gpu": "test"})
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "s"), "--no_plots"]) == 0
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["event_timed"] == {"ours": ["128_64_64"]}
    assert "ours: 1 shapes: 128_64_64" in (tmp_path / "s" / "summary.md").read_text()
    all_graph = write_results(tmp_path / "graph", records[:1], {"gpu": "test"})
    assert summary.main(["--results", str(all_graph["csv"]), "--out", str(tmp_path / "g"), "--no_plots"]) == 0
    assert "by events" not in (tmp_path / "g" / "summary.md").read_text()


def test_wide_csv_in_cuda_l2_format(tmp_path):
    path = tmp_path / "published.csv"
    path.write_text("mnk,torch.matmul,cuBLAS-max\n64_64_64,2.0,1.0\n64_64_128,0.5,4.0\n")
    rows = summary.speedup_rows_from_wide(path, "call")
    table = summary.by_bucket(rows)["call"]
    assert table["torch.matmul"]["<1e9"]["geomean"] == pytest.approx(1.0)
    assert table["cuBLAS-max"]["all"]["geomean"] == pytest.approx(2.0)


def test_published_figures_are_compared_over_the_shapes_both_have(tmp_path):
    """--published: the run's per-call speedups beside a wide CSV's, per baseline and bucket, on the shared shapes
    only; a '-max' the run has one form of is left out (it is not the stronger of both)."""
    small, mid = Shape(64, 64, 64), Shape(1024, 1024, 1024)
    records = [_record(small, 1.0, {"torch.matmul": 4.0, "cuBLAS-nn": 2.0}),   # call: ours 2 us -> 2.0x, 1.0x
               _record(mid, 1.0, {"torch.matmul": 6.0, "cuBLAS-nn": 3.0}),     # 3.0x, 1.5x
               _record(Shape(64, 64, 128), 1.0, {"torch.matmul": 8.0})]        # not in the CSV
    paths = write_results(tmp_path / "run", records, {"gpu": "test"})
    published = tmp_path / "published.csv"
    published.write_text("mnk,torch.matmul,cuBLAS-nn,cuBLAS-max\n64_64_64,1.5,1.25,1.1\n1024_1024_1024,1.2,1.0,0.9\n"
                         "4096_4096_4096,0.9,0.8,0.7\n")
    assert summary.main(["--results", str(paths["csv"]), "--published", str(published), "--out",
                         str(tmp_path / "s"), "--no_plots"]) == 0
    data = json.loads((tmp_path / "s" / "summary.json").read_text())["published"]
    assert data["timing"] == "call"
    by = data["by_baseline"]
    assert set(by) == {"torch.matmul", "cuBLAS-nn"}
    assert by["torch.matmul"]["all"] == pytest.approx({"ours": math.sqrt(2.0 * 3.0), "published": math.sqrt(1.5 * 1.2),
                                                       "n": 2})
    assert by["torch.matmul"]["<1e9"] == pytest.approx({"ours": 2.0, "published": 1.5, "n": 1})
    assert by["cuBLAS-nn"]["1e9-1e11"] == pytest.approx({"ours": 1.5, "published": 1.0, "n": 1})
    assert "| torch.matmul | 2.000x / 1.500x (n=1) | 3.000x / 1.200x (n=1) | - |" in \
        (tmp_path / "s" / "summary.md").read_text()
    with pytest.raises(SystemExit):
        summary.main(["--speedup_csv", str(published), "--published", str(published), "--out", str(tmp_path / "x")])


def test_per_call_speedups_split_by_what_ran_before_the_samples(tmp_path):
    """A run timing both records each competitor's per-call medians after a graph replay and after a call
    (info.call_us_after); the summary gives ours' speedup for each kind apart, by bucket."""
    ok = CheckResult(True, 1e-4, 0.0)

    def rec(shape, after_ours, after_torch):
        def comp(after):
            return competitor_record(shape, ok, {"kernel": 1.0, "call": after["kernel"]}, {"call_us_after": after})
        return shape_record(shape, {"ours": comp(after_ours), "torch.matmul": comp(after_torch)})

    small, big = Shape(64, 64, 64), Shape(4096, 4096, 4096)
    records = [rec(small, {"kernel": 20.0, "call": 10.0}, {"kernel": 60.0, "call": 15.0}),
               rec(big, {"kernel": 200.0, "call": 200.0}, {"kernel": 210.0, "call": 220.0})]
    paths = write_results(tmp_path / "run", records, {"gpu": "test"})
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "s"), "--no_plots"]) == 0
    found = json.loads((tmp_path / "s" / "summary.json").read_text())["call_by_before"]
    assert found["kernel"]["torch.matmul"]["<1e9"] == {"geomean": pytest.approx(3.0), "n": 1}
    assert found["call"]["torch.matmul"]["<1e9"]["geomean"] == pytest.approx(1.5)
    assert found["call"]["torch.matmul"]["all"]["geomean"] == pytest.approx(math.sqrt(1.5 * 1.1))
    assert "samples after a graph replay (cold host path)" in (tmp_path / "s" / "summary.md").read_text()
    assert summary.call_by_before({"shapes": [_record(small, 1.0, {"torch.matmul": 2.0})]}) == {}


def _ran(shape, ours_us, graph_kernel, theirs, **info):
    """A record whose ours' graph choice (its kernel-only figure) was `graph_kernel`."""
    ok = CheckResult(True, 1e-4, 0.0)
    comps = {"ours": competitor_record(shape, ok, {"kernel": ours_us, "call": ours_us},
                                       {"kernel": "sm90_x", "graph_kernel": graph_kernel, "b_layout": "col", **info})}
    for name, us in theirs.items():
        comps[name] = competitor_record(shape, ok, {"kernel": us, "call": 0.9 * us})
    return shape_record(shape, comps)


def test_below_the_floor_where_ours_ran_the_baselines_own_call_is_marked(tmp_path):
    """Kernel-only, ours' graph choice "cublas" is cublasGemmEx in B's form: below 0.97x of that very baseline (with
    its accumulator) is spread of one kernel, and the summary says so; our own kernel below it, a cuBLAS choice above
    it, another baseline, or per call (ours adds its dispatch) are not marked."""
    col = {"cuBLAS-tn": 10.0, "torch.matmul": 9.0}
    records = [_ran(Shape(512, 4096, 4096), 10.5, "cublas", col),   # 0.952x of cuBLAS TN: the same call
               _ran(Shape(256, 4096, 4096), 10.5, "sm90_y", col),   # our kernel below: a loss, not marked
               _ran(Shape(128, 4096, 4096), 10.1, "cublas", col)]   # 0.990x: above the floor
    paths = write_results(tmp_path / "run", records, {"gpu": "test", "acc": "f32", "b_layout": "col"})
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "s"), "--no_plots"]) == 0
    data = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert data["below_floor_own_call"] == {"kernel": {"cuBLAS-tn": ["512_4096_4096"],
                                                       "cuBLAS-max": ["512_4096_4096"]}}
    assert data["by_bucket"]["kernel"]["cuBLAS-tn"]["all"]["below_floor"] == 2   # still counted below
    assert "kernel, cuBLAS-tn: 1 of the 2 below: 512_4096_4096" in (tmp_path / "s" / "summary.md").read_text()

    def f16_run(**info):   # an f16 run: the same call only where ours' cuBLAS choice accumulated in fp16 too
        return summary.below_floor_own_call({"meta": {"acc": "f16", "b_layout": "col"}, "shapes": [
            _ran(Shape(512, 4096, 4096), 10.5, "cublas", col, **info)]})

    assert f16_run(graph_run_acc="f16") == {"kernel": {"cuBLAS-tn": ["512_4096_4096"],
                                                       "cuBLAS-max": ["512_4096_4096"]}}
    assert f16_run(graph_run_acc="f32") == {}
    assert f16_run() == {}   # not recorded (runs before session 47): not claimed


def test_results_interrupted_while_written_are_whole_and_agree(tmp_path, monkeypatch):
    """A deadline's SIGINT in the middle of a write (session 21 cut results.csv at 150 of 890 shapes) is raised
    once every file is in place: the JSON and the CSVs hold the same shapes, and no temporary file is left."""
    import os
    import signal

    from tuner import results

    records = [_record(Shape(64, 64 * i, 64), 1.0, {"torch.matmul": 2.0}) for i in range(1, 4)]
    write_results(tmp_path, records[:1], {"gpu": "test"})
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when pytest runs as a background job
    real_csv = results._write_csv

    def interrupted_csv(f, fields, rows):
        os.kill(os.getpid(), signal.SIGINT)  # arrives mid-write
        real_csv(f, fields, rows)

    monkeypatch.setattr(results, "_write_csv", interrupted_csv)
    with pytest.raises(KeyboardInterrupt):
        write_results(tmp_path, records, {"gpu": "test"})
    monkeypatch.setattr(results, "_write_csv", real_csv)
    assert len(results.read_json(tmp_path / "results.json")["shapes"]) == 3
    assert {row["mnk"] for row in summary.read_long_csv(tmp_path / "results.csv")} == {r["mnk"] for r in records}
    assert len(summary.read_long_csv(tmp_path / "speedup_call.csv")) == 3
    assert not list(tmp_path.glob("*.tmp"))
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
