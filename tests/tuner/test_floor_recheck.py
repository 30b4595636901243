"""tuner.floor_recheck: which shapes a grid put below the floor, and the verdict once fresh runs timed them again."""
import json

import pytest

from tuner import floor_recheck as fr


def run(speedups: dict[str, dict[str, float]], timing: str = "kernel") -> dict:
    """A results.json with ours' speedup per shape and baseline for one timing."""
    return {"shapes": [{"mnk": mnk, "speedup": {timing: dict(s)}} for mnk, s in speedups.items()]}


GRID = run({"64_64_64": {"torch.matmul": 0.95, "cuBLAS-tn": 1.01},
            "128_64_64": {"torch.matmul": 1.20, "cuBLAS-tn": 0.90},
            "256_64_64": {"torch.matmul": 0.80, "cuBLAS-tn": 0.96},
            "512_64_64": {"torch.matmul": 1.00}})


def test_pick_lists_a_shape_below_the_floor_against_any_named_baseline_once():
    assert fr.pick([GRID], "kernel", ["torch.matmul", "cuBLAS-tn"]) == ["64_64_64", "128_64_64", "256_64_64"]
    assert fr.pick([GRID], "kernel", ["torch.matmul"]) == ["64_64_64", "256_64_64"]
    assert fr.pick([GRID], "call", ["torch.matmul"]) == []


@pytest.mark.parametrize("first, rounds, expected", [
    (0.95, [0.96, 0.93], fr.BELOW),
    (0.95, [0.96, 0.99], fr.SPREAD),
    (0.95, [0.98, 1.02], fr.ABOVE),
    (0.95, [0.97], fr.ABOVE),          # the floor itself is not below it
    (None, [0.90], fr.BELOW),
])
def test_verdict(first, rounds, expected):
    assert fr.verdict(first, rounds) == expected


def test_verdict_needs_a_round():
    with pytest.raises(ValueError):
        fr.verdict(0.9, [])


def test_report_sets_each_round_beside_the_grid_and_counts_per_baseline():
    rounds = [run({"64_64_64": {"torch.matmul": 0.99, "cuBLAS-tn": 1.0}, "128_64_64": {"cuBLAS-tn": 0.91},
                   "256_64_64": {"torch.matmul": 0.85, "cuBLAS-tn": 0.95}}),
              run({"64_64_64": {"torch.matmul": 1.01}, "128_64_64": {"cuBLAS-tn": 0.99},
                   "256_64_64": {"torch.matmul": 0.86, "cuBLAS-tn": 0.97}})]
    rep = fr.report(GRID, rounds, "kernel", ["torch.matmul", "cuBLAS-tn"])
    got = {(r["mnk"], r["baseline"]): r for r in rep["rows"]}
    assert set(got) == {("64_64_64", "torch.matmul"), ("256_64_64", "torch.matmul"),
                        ("128_64_64", "cuBLAS-tn"), ("256_64_64", "cuBLAS-tn")}
    assert got[("64_64_64", "torch.matmul")]["verdict"] == fr.ABOVE
    assert got[("256_64_64", "torch.matmul")]["verdict"] == fr.BELOW
    assert got[("256_64_64", "torch.matmul")]["rounds"] == [0.85, 0.86]
    assert got[("256_64_64", "torch.matmul")]["min"] == 0.80
    assert got[("128_64_64", "cuBLAS-tn")]["verdict"] == fr.SPREAD
    assert got[("256_64_64", "cuBLAS-tn")]["verdict"] == fr.SPREAD
    assert got[("256_64_64", "cuBLAS-tn")]["median"] == pytest.approx(0.96)
    assert rep["counts"]["torch.matmul"] == {fr.BELOW: 1, fr.SPREAD: 0, fr.ABOVE: 1, "untimed": 0}
    assert rep["counts"]["cuBLAS-tn"] == {fr.BELOW: 0, fr.SPREAD: 2, fr.ABOVE: 0, "untimed": 0}
    assert "| torch.matmul | 1 | 0 | 1 | 0 |" in fr.format_report(rep)


def test_a_shape_no_round_timed_is_untimed_not_passed():
    rep = fr.report(GRID, [run({"64_64_64": {"torch.matmul": 1.0}})], "kernel", ["torch.matmul"])
    assert [u["mnk"] for u in rep["untimed"]] == ["256_64_64"]
    assert rep["counts"]["torch.matmul"]["untimed"] == 1
    assert [r["mnk"] for r in rep["rows"]] == ["64_64_64"]


def test_cli_pick_then_report(tmp_path, capsys):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    shapes = tmp_path / "shapes.txt"
    assert fr.main(["pick", "--results", str(grid), "--baselines", "torch.matmul", "--out", str(shapes)]) == 0
    assert shapes.read_text().split() == ["64_64_64", "256_64_64"]
    again = tmp_path / "r1.json"
    again.write_text(json.dumps(run({"64_64_64": {"torch.matmul": 0.96}, "256_64_64": {"torch.matmul": 0.99}})))
    out = tmp_path / "rep"
    assert fr.main(["report", "--results", str(grid), "--rounds", str(again), "--out", str(out)]) == 0
    rep = json.loads((out / "report.json").read_text())
    assert rep["counts"]["torch.matmul"] == {"below": 1, "within spread": 0, "above": 1, "untimed": 0}
    assert (out / "report.md").read_text() in capsys.readouterr().out


def with_choice(results: dict, choices: dict[str, tuple]) -> dict:
    for rec in results["shapes"]:
        eager, graph = choices[rec["mnk"]]
        rec["competitors"] = {"ours": {"info": {"kernel": eager, "graph_kernel": graph}}}
    return results


def test_report_counts_rounds_whose_ours_ran_another_kernel():
    first = with_choice(run({"64_64_64": {"torch.matmul": 0.9}}), {"64_64_64": ("sm90_a", "cublas")})
    same = with_choice(run({"64_64_64": {"torch.matmul": 0.9}}), {"64_64_64": ("sm90_b", "cublas")})
    other = with_choice(run({"64_64_64": {"torch.matmul": 0.9}}), {"64_64_64": ("sm90_a", None)})
    rep = fr.report(first, [same, other], "kernel", ["torch.matmul"])
    assert rep["rows"][0]["choice"] == "cublas"
    assert rep["rows"][0]["other_choice"] == 1       # the graph choice decides kernel-only; none falls to the eager

    first_call = with_choice(run({"64_64_64": {"torch.matmul": 0.9}}, "call"), {"64_64_64": ("sm90_a", "x")})
    again_call = with_choice(run({"64_64_64": {"torch.matmul": 0.9}}, "call"), {"64_64_64": ("sm90_b", "x")})
    row = fr.report(first_call, [again_call], "call", ["torch.matmul"])["rows"][0]
    assert (row["choice"], row["other_choice"]) == ("sm90_a", 1)   # per call, the eager choice decides


def _timed(mnk: str, times: dict[str, float], ran: str = "sm90_x", ok: bool = True) -> dict:
    """A shape record whose competitors took `times` µs (kernel-only; per call twice that)."""
    m, n, k = map(int, mnk.split("_"))
    comps = {name: {"ok": ok or name != "ours", "kernel_us": us, "call_us": 2 * us,
                    "info": {"kernel": ran, "graph_kernel": ran} if name == "ours" else {}}
             for name, us in times.items()}
    return {"mnk": mnk, "flop": 2.0 * m * n * k, "competitors": comps, "speedup": {"kernel": {}, "call": {}}}


META = {"gpu": "NVIDIA H100 80GB HBM3", "commit": "abc1234", "acc": "f32", "b_layout": "row"}


def test_rechecked_takes_each_competitors_median_over_the_grid_and_its_rounds():
    grid = {"meta": META, "shapes": [_timed("64_64_64", {"ours": 12.0, "cuBLAS-nn": 10.0}),
                                     _timed("128_64_64", {"ours": 9.0, "cuBLAS-nn": 10.0})]}
    rounds = [{"meta": META, "shapes": [_timed("64_64_64", {"ours": 9.0, "cuBLAS-nn": 10.5})]},
              {"meta": META, "shapes": [_timed("64_64_64", {"ours": 9.5, "cuBLAS-nn": 10.2})]}]
    again = fr.rechecked(grid, rounds)
    first, second = again["shapes"]
    assert first["competitors"]["ours"]["kernel_us"] == 9.5 and first["competitors"]["ours"]["call_us"] == 19.0
    assert first["competitors"]["cuBLAS-nn"]["kernel_us"] == 10.2
    assert first["speedup"]["kernel"]["cuBLAS-nn"] == pytest.approx(10.2 / 9.5)
    assert first["competitors"]["ours"]["kernel_tflops"] == pytest.approx(2 * 64 ** 3 / 9.5e-6 / 1e12)
    assert second == grid["shapes"][1]                      # a shape no round timed stays as the grid had it
    assert grid["shapes"][0]["competitors"]["ours"]["kernel_us"] == 12.0   # the grid itself is not modified


def test_rechecked_leaves_out_readings_that_failed_their_check():
    grid = {"meta": META, "shapes": [_timed("64_64_64", {"ours": 12.0, "cuBLAS-nn": 10.0})]}
    rounds = [{"meta": META, "shapes": [_timed("64_64_64", {"ours": 1.0, "cuBLAS-nn": 10.0}, ok=False)]},
              {"meta": META, "shapes": [_timed("64_64_64", {"ours": 11.0, "cuBLAS-nn": 10.0})]}]
    assert fr.rechecked(grid, rounds)["shapes"][0]["competitors"]["ours"]["kernel_us"] == 11.5


@pytest.mark.parametrize("key, value", [("commit", "fff0000"), ("gpu", "NVIDIA H200"), ("b_layout", "col")])
def test_rechecked_refuses_rounds_of_other_tables_or_another_card(key, value):
    grid = {"meta": META, "shapes": [_timed("64_64_64", {"ours": 12.0})]}
    with pytest.raises(ValueError, match=key):
        fr.rechecked(grid, [{"meta": {**META, key: value}, "shapes": [_timed("64_64_64", {"ours": 9.0})]}])


def test_rechecked_takes_rounds_of_another_commit_only_where_told_both_ran_the_same_tables():
    grid = {"meta": META, "shapes": [_timed("64_64_64", {"ours": 12.0})]}
    later = [{"meta": {**META, "commit": "fff0000"}, "shapes": [_timed("64_64_64", {"ours": 9.0})]}]
    assert fr.rechecked(grid, later, same_tables=True)["shapes"][0]["competitors"]["ours"]["kernel_us"] == 10.5
    with pytest.raises(ValueError, match="gpu"):     # the card is checked all the same
        fr.rechecked(grid, [{**later[0], "meta": {**later[0]["meta"], "gpu": "NVIDIA H200"}}], same_tables=True)


def test_rechecked_refuses_a_round_where_ours_ran_another_choice():
    grid = {"meta": META, "shapes": [_timed("64_64_64", {"ours": 12.0})]}
    with pytest.raises(ValueError, match="another choice"):
        fr.rechecked(grid, [{"meta": META, "shapes": [_timed("64_64_64", {"ours": 9.0}, ran="cublas")]}])


def test_rechecked_times_the_algorithm_autotuning_kept_most_often_and_names_it():
    """Session 55, 2048x512x2048: the grid's autotuner kept index 2, all three rounds index 1 (faster). A median over
    both would be index 1's time under index 2's name, and a table entry made from it would run index 2."""
    lt = "cuBLASLt-auto-tuning-tn"

    def shape(ours: float, us: float, index: int) -> dict:
        rec = _timed("2048_512_2048", {"ours": ours, lt: us})
        rec["competitors"][lt]["info"] = {"algo_index": index, "algo": {"algo_id": 66, "tile_id": 400 - index}}
        return rec
    grid = {"meta": META, "shapes": [shape(10.3, 10.6, 2)]}
    rounds = [{"meta": META, "shapes": [shape(ours, us, 1)]} for ours, us in ((10.35, 9.93), (10.37, 9.87),
                                                                               (10.21, 9.96))]
    merged = fr.rechecked(grid, rounds)["shapes"][0]["competitors"][lt]
    assert merged["info"]["algo_index"] == 1 and merged["info"]["algo"]["tile_id"] == 399
    assert merged["kernel_us"] == 9.93 and merged["call_us"] == 19.86     # index 1's readings only
    # a tie goes to the faster algorithm; one algorithm throughout is the plain median
    tie = fr.rechecked(grid, rounds[:1])["shapes"][0]["competitors"][lt]
    assert tie["info"]["algo_index"] == 1 and tie["kernel_us"] == 9.93
    same = fr.rechecked({"meta": META, "shapes": [shape(10.3, 10.6, 1)]}, rounds)["shapes"][0]["competitors"][lt]
    assert same["kernel_us"] == pytest.approx((9.93 + 9.96) / 2)


def test_the_baselines_of_a_run_are_those_it_timed_in_the_known_order_never_ours(tmp_path, capsys):
    shape = {"mnk": "64_64_64", "competitors": {"ours": {}, "ours:v1": {}, "cuBLASLt-auto-tuning-nn": {},
                                                "torch.matmul": {}}}
    later = {"mnk": "128_64_64", "competitors": {"ours": {}, "torch.matmul": {}}}
    results = {"meta": {}, "shapes": [shape, later]}
    assert fr.baselines_of(results) == ["torch.matmul", "cuBLASLt-auto-tuning-nn"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    assert fr.main(["baselines", "--results", str(path)]) == 0
    assert capsys.readouterr().out == "torch.matmul,cuBLASLt-auto-tuning-nn\n"


def test_a_run_that_timed_no_baseline_is_refused(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"meta": {}, "shapes": [{"mnk": "64_64_64", "competitors": {"ours": {}}}]}))
    with pytest.raises(SystemExit, match="no baseline timed"):
        fr.main(["baselines", "--results", str(path)])
