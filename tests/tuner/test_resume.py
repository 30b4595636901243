"""Tuning is resumable: finished shapes are kept in a JSONL file and skipped on a rerun; the model is rebuilt."""
import json

import pytest

from tuner.store import ResultStore
from tuner.tune_cli import main


def _tune(tmp_path, limit):
    grid = tmp_path / "grid.txt"
    grid.write_text("\n".join(["64_64_64", "128_128_128", "256_4096_64", "1024_1024_1024", "64_16384_256"]))
    argv = ["--grid", str(grid), "--env", "synthetic", "--budget-trials", "5", "--state-dir", str(tmp_path / "st"),
            "--tables-dir", str(tmp_path / "tables"), "--limit", str(limit)]
    assert main(argv) == 0
    return ResultStore(tmp_path / "st" / "finished_f32_col.jsonl")


def test_second_run_skips_finished_shapes_and_writes_one_table(tmp_path):
    store = _tune(tmp_path, 3)
    first = store.load()
    assert len(first) == 3
    store = _tune(tmp_path, 5)
    lines = store.path.read_text().splitlines()
    assert len(lines) == 5  # the 3 finished shapes were not tuned again
    assert {json.loads(line)["mnk"] for line in lines[:3]} == {r["mnk"] for r in first.values()}
    table = json.loads((tmp_path / "tables" / "sm90_f32.json").read_text())
    assert len(table["entries"]) == 5
    predictor = json.loads((tmp_path / "st" / "predictor_f32_col.json").read_text())
    assert predictor["agent"]["n_obs"] == 25


def test_a_torn_last_line_is_ignored_and_not_glued_to_the_next(tmp_path):
    store = ResultStore(tmp_path / "f.jsonl")
    store.append({"mnk": "64_64_64", "acc": "f32", "b_layout": "col"})
    with open(store.path, "a") as f:
        f.write('{"mnk": "128_12')  # crash mid-write
    store.append({"mnk": "256_256_256", "acc": "f32", "b_layout": "col"})
    assert sorted(store.load()) == ["256_256_256|f32|col", "64_64_64|f32|col"]


def test_deadline_stops_starting_shapes_and_still_writes_the_table(tmp_path):
    grid = tmp_path / "grid.txt"
    grid.write_text("\n".join(["64_64_64", "128_128_128", "256_4096_64"]))
    argv = ["--grid", str(grid), "--env", "synthetic", "--budget-trials", "5", "--state-dir", str(tmp_path / "st"),
            "--tables-dir", str(tmp_path / "tables"), "--deadline-seconds", "0"]
    assert main(argv) == 0  # no shape is started once the deadline has passed
    table = json.loads((tmp_path / "tables" / "sm90_f32.json").read_text())
    finished = ResultStore(tmp_path / "st" / "finished_f32_col.jsonl").load()
    assert len(table["entries"]) == len(finished) < 3
    assert main(argv[:-2]) == 0  # the rerun without a deadline finishes the rest
    assert len(json.loads((tmp_path / "tables" / "sm90_f32.json").read_text())["entries"]) == 3


def test_the_search_policy_flags_reach_the_agent_that_tunes(tmp_path):
    grid = tmp_path / "grid.txt"
    grid.write_text("64_64_64\n256_4096_64\n")
    argv = ["--grid", str(grid), "--env", "synthetic", "--budget-trials", "6", "--state-dir", str(tmp_path / "st"),
            "--tables-dir", str(tmp_path / "tables")]
    assert main(argv + ["--repeat-penalty", "0.1", "--cover-families"]) == 0
    params = json.loads((tmp_path / "st" / "predictor_f32_col.json").read_text())["agent"]["params"]
    assert params["repeat_penalty"] == 0.1 and params["cover_families"] is True
    records = ResultStore(tmp_path / "st" / "finished_f32_col.jsonl").load().values()
    assert all({"sm90", "sm80"} <= {t["arm"]["family"] for t in r["trials"]} for r in records)  # every family measured


def test_a_shape_no_variant_supports_is_tuned_over_the_library_arms(tmp_path):
    grid = tmp_path / "grid.txt"
    grid.write_text("300_301_77\n64_64_64\n")  # N and K odd: no alignment-8/4/2 variant runs it, cuBLAS(Lt) does
    argv = ["--grid", str(grid), "--env", "synthetic", "--budget-trials", "5", "--state-dir", str(tmp_path / "st"),
            "--tables-dir", str(tmp_path / "tables")]
    assert main(argv) == 0
    table = json.loads((tmp_path / "tables" / "sm90_f32.json").read_text())
    entries = {(e["m"], e["n"], e["k"]): e for e in table["entries"]}
    assert entries[(300, 301, 77)]["kernel"] in ("cublas", "cublaslt") and (64, 64, 64) in entries


@pytest.mark.parametrize("extra, words", [
    (["--variant-set", "splitk,nope"], "--variant-set: unknown ['nope']"),
    (["--budget-trials", "0"], "--budget-trials and --batch must be >= 1"),
    (["--grid", "/nonexistent/grid.txt"], "--grid: [Errno 2]"),
])
def test_bad_arguments_are_usage_errors_before_any_tuning(tmp_path, capsys, extra, words):
    grid = tmp_path / "grid.txt"
    grid.write_text("64_64_64\n")
    argv = ["--grid", str(grid), "--env", "synthetic", "--state-dir", str(tmp_path / "st"),
            "--tables-dir", str(tmp_path / "tables"), *extra]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "st").exists()
