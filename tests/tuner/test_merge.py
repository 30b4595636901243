"""tuner.merge: records of several tuning runs merged on a common cuBLAS scale, and f16 tables that take faster
fp32-accumulating choices; tuner.retable driving both from record files."""
import gzip
import json

import pytest

from tuner.merge import borrow_more_precise, merge_runs
from tuner.objective import Objective


def trial(config, us, cublas_us, family="sm90", error=None):
    return {"arm": {"config": config, "family": family, "algo": -1}, "us": us,
            "speedup": cublas_us / us if us else 0.0, "error": error}


def record(mnk, cublas_us, *trials):
    return {"mnk": mnk, "cublas_us": cublas_us, "trials": list(trials),
            "best": max(trials, key=lambda t: t["speedup"]) if trials else None}


def test_a_later_run_competes_on_the_first_runs_cublas_scale():
    first = [record("64_64_64", 10.0, trial("a", 9.8, 10.0)), record("128_128_128", 20.0, trial("a", 19.0, 20.0))]
    # the second run's GPU was 10% slower overall (cuBLAS 11 µs): its 10.45 µs arm is a 9.5 µs arm on the first's scale
    second = [record("64_64_64", 11.0, trial("b", 10.45, 11.0), trial("c", None, 11.0, error="launch failed")),
              record("256_256_256", 5.0, trial("b", 4.0, 5.0))]
    merged = {r["mnk"]: r for r in merge_runs([first, second])}
    assert set(merged) == {"64_64_64", "128_128_128"}  # shapes only a later run has are not invented
    best = merged["64_64_64"]["best"]
    assert best["arm"]["config"] == "b" and best["us"] == pytest.approx(9.5) and best["run"] == 1
    assert best["speedup"] == pytest.approx(10.0 / 9.5)
    assert len(merged["64_64_64"]["trials"]) == 3 and merged["128_128_128"]["best"]["arm"]["config"] == "a"
    assert first[0]["trials"][0].get("run") is None  # the inputs are not modified


def entry(m, kernel, us, cublas_us):
    return {"m": m, "n": 64, "k": 64, "b_layout": "col", "kernel": kernel, "config": {}, "runtime": {},
            "us": us, "cublas_us": cublas_us}


def test_f16_entries_take_an_f32_choice_only_when_it_is_clearly_faster():
    f16 = [entry(4096, "cublas", 100.0, 100.0), entry(8192, "cublaslt", 100.0, 110.0), entry(64, "sm80_x", 3.0, 3.1)]
    f32 = [entry(4096, "cublaslt", 90.0, 95.0), entry(8192, "cublas", 99.0, 99.0), entry(64, "cublas", 2.9, 2.9)]
    out, borrowed = borrow_more_precise(f16, f32, Objective("kernel"), margin=1.02)
    assert borrowed == 2
    assert out[0] == {**f32[0], "acc": "f32", "cublas_us": 100.0}  # speedup stays against f16's own cuBLAS
    assert out[1] is f16[1]  # 1% faster is within the margin: kept
    assert out[2]["acc"] == "f32"
    # by time per call, a 3.4% faster cuBLAS kernel does not pay for its ~6 µs longer host path
    out, borrowed = borrow_more_precise(f16, f32, Objective("call"), margin=1.02)
    assert borrowed == 1 and out[2] is f16[2]
    with pytest.raises(ValueError):
        borrow_more_precise(f16, f32, Objective(), margin=0.9)


def test_large_shapes_can_borrow_unless_the_f16_choice_is_clearly_faster():
    big, small = 8192, 64  # (m, 64, 64): 2mnk = 6.7e7 and 5.2e5, either side of 1e7
    f16 = [entry(big, "cublas", 100.0, 100.0), entry(small, "cublas", 3.0, 3.0)]
    f32 = [entry(big, "cublas", 102.0, 102.0), entry(small, "cublas", 3.05, 3.05)]
    out, borrowed = borrow_more_precise(f16, f32, Objective("kernel"), margin=1.02, large=(1e7, 0.97))
    assert borrowed == 1 and out[0]["acc"] == "f32" and out[1] is f16[1]  # 2% slower in tuning: borrowed anyway
    out, borrowed = borrow_more_precise(f16, [entry(big, "cublas", 104.0, 104.0)], Objective("kernel"),
                                        large=(1e7, 0.97))
    assert borrowed == 0 and out[0] is f16[0]  # f16 ≥ 3% faster: kept
    with pytest.raises(ValueError):
        borrow_more_precise(f16, f32, Objective(), large=(1e7, 0.0))


def test_retable_merges_runs_and_borrows(tmp_path):
    from tuner.lt_arms import lt_arm
    from tuner.retable import main

    lt = lt_arm(2).to_dict()

    def lt_trial(us, cublas_us):
        return {**trial("cublaslt", us, cublas_us), "arm": lt}

    runs = {"s3": {"f32": [record("4096_4096_4096", 200.0, lt_trial(199.0, 200.0))],
                   "f16": [record("4096_4096_4096", 230.0, lt_trial(229.0, 230.0))]},
            "s2": {"f32": [record("4096_4096_4096", 210.0, lt_trial(190.0, 210.0))], "f16": []}}
    for run, by_acc in runs.items():
        (tmp_path / run).mkdir()
        for acc, records in by_acc.items():
            with gzip.open(tmp_path / run / f"finished_{acc}_col.jsonl.gz", "wt") as f:
                f.write("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "sm90_f16.json"
    states = ["--state", str(tmp_path / "s3"), "--state", str(tmp_path / "s2")]
    assert main(states + ["--acc", "f16", "--borrow-f32", "--out", str(out)]) == 0
    table = json.loads(out.read_text())
    (e,) = table["entries"]
    # s2's algorithm, rescaled to s3's cuBLAS (190 * 200/210 = 181 µs), beats f16's 229 µs: run in fp32
    assert e["acc"] == "f32" and e["kernel"] == "cublaslt" and e["us"] == pytest.approx(190 * 200 / 210)
    assert table["meta"]["tuner"]["runs_merged"] == 2 and table["meta"]["tuner"]["borrowed_f32"] == 1
    with pytest.raises(SystemExit):
        main(states + ["--acc", "f32", "--borrow-f32", "--out", str(tmp_path / "sm90_f32.json")])


def test_a_run_kept_in_parts_reads_as_one_run(tmp_path):
    from tuner.retable import read_run

    def write(folder, *records):
        (tmp_path / folder).mkdir()
        with gzip.open(tmp_path / folder / "finished_f32_row.jsonl.gz", "wt") as f:
            f.write("".join(json.dumps(r) + "\n" for r in records))

    write("base", record("64_64_64", 10.0, trial("a", 9.0, 10.0)), record("128_128_128", 20.0, trial("a", 19.0, 20.0)))
    write("rest", record("128_128_128", 21.0, trial("b", 18.0, 21.0)),
          record("16384_64_64", 50.0, trial("c", 40.0, 50.0)))
    records = {r["mnk"]: r for r in read_run(f"{tmp_path / 'base'}+{tmp_path / 'rest'}", "f32", "row")}
    assert set(records) == {"64_64_64", "128_128_128", "16384_64_64"}  # the resumed part's new shapes count
    assert records["128_128_128"]["cublas_us"] == 21.0  # the later part's record of a shape replaces the earlier
    separate_runs = [read_run(str(tmp_path / part), "f32", "row") for part in ("base", "rest")]
    assert {r["mnk"] for r in merge_runs(separate_runs)} == {"64_64_64", "128_128_128"}
    with pytest.raises(FileNotFoundError):
        read_run(f"{tmp_path / 'base'}+{tmp_path / 'missing'}", "f32", "row")


def test_with_graph_adds_the_other_objectives_choice_only_where_it_differs():
    from tuner.tables import with_graph

    eager = [entry(64, "sm80_x", 3.0, 3.1), entry(128, "cublas", 5.0, 5.0)]
    graph = [{**entry(64, "cublaslt", 2.8, 3.1), "config": {"kind": "lt_algo", "algo_index": 1}, "acc": "f32"},
             entry(128, "cublas", 5.0, 5.0)]
    out, count = with_graph(eager, graph)
    assert count == 1 and out[1] is eager[1]
    assert out[0] == {**eager[0], "graph": {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 1},
                                            "runtime": {}, "us": 2.8, "acc": "f32"}}


def test_retable_gives_captured_calls_the_fastest_kernel_and_eager_calls_the_cheapest_call(tmp_path):
    from kernels.tuned_tables import load_table
    from tuner.arms import from_kernel_space
    from tuner.lt_arms import lt_arm
    from tuner.retable import main

    arms, _ = from_kernel_space("f16", "col", None)
    sm80 = next(a for a in arms if a.family == "sm80" and a.supports(64, 4096, 64)).to_dict()
    fast_kernel = {**trial("cublaslt", 8.8, 10.0), "arm": lt_arm(1).to_dict()}
    cheap_launch = {**trial(sm80["config"], 9.0, 10.0, family="sm80"), "arm": sm80}  # 2% slower, 6 µs cheaper call
    (tmp_path / "run").mkdir()
    with gzip.open(tmp_path / "run" / "finished_f16_col.jsonl.gz", "wt") as f:
        f.write(json.dumps(record("64_4096_64", 10.0, fast_kernel, cheap_launch)) + "\n")
    out = tmp_path / "sm90_f16.json"
    assert main(["--state", str(tmp_path / "run"), "--acc", "f16", "--objective", "call", "--graph-objective",
                 "kernel", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["meta"]["tuner"]["graph"] == {"objective": "kernel", "alternatives": 1}
    e = load_table(out).lookup(64, 4096, 64, "col")  # what the dispatcher loads
    assert e.kernel == sm80["config"] and (e.graph.kernel, e.graph.config["algo_index"], e.graph.us) == \
        ("cublaslt", 1, 8.8)
    # without the flag the table is what it was
    assert main(["--state", str(tmp_path / "run"), "--acc", "f16", "--objective", "call", "--out", str(out)]) == 0
    assert "graph" not in json.loads(out.read_text())["entries"][0]
    assert "graph" not in json.loads(out.read_text())["meta"]["tuner"]


def test_a_row_retable_keeps_the_col_entries_and_their_description(tmp_path):
    from tuner.lt_arms import lt_arm
    from tuner.retable import main

    (tmp_path / "run").mkdir()
    with gzip.open(tmp_path / "run" / "finished_f32_row.jsonl.gz", "wt") as f:
        f.write(json.dumps(record("64_4096_64", 10.0, {**trial("cublaslt", 8.8, 10.0), "arm": lt_arm(1).to_dict()}))
                + "\n")
    with gzip.open(tmp_path / "run" / "finished_f32_col.jsonl.gz", "wt") as f:
        f.write(json.dumps(record("64_64_64", 10.0, {**trial("cublaslt", 8.0, 10.0), "arm": lt_arm(2).to_dict()}))
                + "\n")
    col = {**entry(128, "cublas", 5.0, 5.0), "config": {"kind": "gemmex_tn"}}
    out = tmp_path / "sm90_f32.json"
    described = {"acc": "f32", "arch": "sm90", "gpu": "H200", "date": "2026-12-01", "commit": "x", "driver": "580",
                 "cuda": "13.0", "torch": "2.11", "tuner": {"objective": "call", "runs_merged": 5},
                 "confirmed": {"runs": ["f32"], "eager": 3}, "confirmed_row": {"runs": ["f32"], "eager": 2}}
    out.write_text(json.dumps({"meta": described, "entries": [col]}))
    assert main(["--state", str(tmp_path / "run"), "--acc", "f32", "--b-layout", "row", "--objective", "kernel",
                 "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {(e["m"], e["b_layout"]) for e in data["entries"]} == {(128, "col"), (64, "row")}
    assert data["meta"]["tuner"] == described["tuner"] and data["meta"]["confirmed"] == described["confirmed"]
    assert "confirmed_row" not in data["meta"]  # the row corrections described the old row entries: dropped
    assert data["meta"]["tuner_row"]["objective"] == "kernel" and data["meta"]["tuner_row"]["runs_merged"] == 1
    # a col retable replaces the col entries and drops the corrections that described them; the row ones stay
    assert main(["--state", str(tmp_path / "run"), "--acc", "f32", "--objective", "kernel", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {(e["m"], e["b_layout"]) for e in data["entries"]} == {(64, "col"), (64, "row")}
    assert "confirmed" not in data["meta"] and data["meta"]["tuner_row"]["runs_merged"] == 1
