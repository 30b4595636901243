"""tuner.twin_sweep: which row twins of the col choices a sweep times, and the eval CLI's per-shape variants."""
from __future__ import annotations

import pytest

from tuner.twin_sweep import main, sweep, twin

SM90 = {"family": "sm90", "acc": "f32", "b_layout": "col", "tile": [64, 128, 64], "cluster": [1, 1],
        "warp": [0, 0, 0], "stages": 0, "schedule": "pingpong", "scheduler": "persistent", "alignment": 8}
COL_NAME = "sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8"
ROW_NAME = "sm90_f32_row_t64x128x64_c1x1_sauto_pp_pers_a8"
KNOBS = {"raster": 0, "swizzle": 0, "splits": 0}
EVAL = ["--acc_precise", "fp32", "--warmup_seconds", "1", "--benchmark_seconds", "1", "--base_dir", "./results",
        "--gpu_device_id", "0", "--mode", "offline"]
CUBLAS_NN = {"kernel": "cublas", "config": {"kind": "gemmex_nn"}, "runtime": KNOBS}


def entry(m, n, k, layout, arm, graph=None):
    e = {"m": m, "n": n, "k": k, "b_layout": layout, **arm, "us": 10.0, "cublas_us": 11.0}
    if graph is not None:
        e["graph"] = dict(graph, us=9.0)
    return e


def sm90(layout):
    return {"kernel": COL_NAME if layout == "col" else ROW_NAME, "config": dict(SM90, b_layout=layout),
            "runtime": KNOBS}


def test_the_twin_of_a_built_variant_and_none_for_a_library_arm():
    assert twin(sm90("col")) == ROW_NAME
    assert twin(sm90("row"), "col") == COL_NAME
    assert twin(CUBLAS_NN) is None


def test_a_row_entry_gets_the_twin_of_each_col_choice_it_does_not_run():
    entries = [
        entry(1024, 8192, 128, "col", sm90("col")), entry(1024, 8192, 128, "row", CUBLAS_NN),          # swept
        entry(2048, 2048, 2048, "col", sm90("col")), entry(2048, 2048, 2048, "row", sm90("row")),      # has it
        entry(512, 512, 512, "col", CUBLAS_NN | {"config": {"kind": "gemmex_tn"}}),                    # no twin
        entry(512, 512, 512, "row", CUBLAS_NN),
        entry(4096, 4096, 128, "col", CUBLAS_NN | {"config": {"kind": "gemmex_tn"}}, graph=sm90("col")),
        entry(4096, 4096, 128, "row", sm90("row") | {"kernel": "sm90_other"}),                         # graph role
        entry(64, 64, 64, "row", CUBLAS_NN),                                                           # no col entry
    ]
    assert sweep(entries) == {"1024_8192_128": [ROW_NAME], "4096_4096_128": [ROW_NAME]}
    assert sweep(entries, min_flop=4e9) == {"4096_4096_128": [ROW_NAME]}
    assert sweep(entries, library_only=True) == {"1024_8192_128": [ROW_NAME]}


def test_the_col_direction_gets_the_col_twins_of_the_row_choices():
    entries = [
        entry(1024, 8192, 128, "row", sm90("row")), entry(1024, 8192, 128, "col", CUBLAS_NN),          # swept
        entry(2048, 2048, 2048, "row", sm90("row")), entry(2048, 2048, 2048, "col", sm90("col")),      # has it
        entry(512, 512, 512, "row", CUBLAS_NN), entry(512, 512, 512, "col", sm90("col")),              # no twin
    ]
    assert sweep(entries, layout="col") == {"1024_8192_128": [COL_NAME]}
    assert sweep(entries) == {"512_512_512": [ROW_NAME]}


def test_cli_writes_lines_the_eval_cli_reads(tmp_path):
    import json

    from tuner.eval_cli import parse_args

    table = {"meta": {}, "entries": [entry(1024, 8192, 128, "col", sm90("col")),
                                     entry(1024, 8192, 128, "row", CUBLAS_NN)]}
    (tmp_path / "sm90_f32.json").write_text(json.dumps(table))
    out = tmp_path / "sweep.txt"
    assert main(["--tables", str(tmp_path), "--acc", "f32", "--out", str(out)]) == 0
    assert out.read_text() == f"1024_8192_128 {ROW_NAME}\n"
    (tmp_path / "grid.txt").write_text("1024_8192_128\n")
    args = parse_args(["--grid", str(tmp_path / "grid.txt"), *EVAL, "--b_layout", "row",
                       "--also_variants_per_shape", str(out)])
    assert [c.name for c in args.variants_per_shape["1024_8192_128"]] == [ROW_NAME]


@pytest.mark.parametrize("line", ["1024_8192_128", "1024_8192_128 sm90_nonsense", "1024x8192 " + ROW_NAME])
def test_the_eval_cli_rejects_a_bad_per_shape_line(tmp_path, line):
    from tuner.eval_cli import parse_args

    (tmp_path / "v.txt").write_text(f"# a comment\n\n{line}\n")
    with pytest.raises(SystemExit):
        parse_args(["--mnk", "64_64_64", *EVAL, "--also_variants_per_shape", str(tmp_path / "v.txt")])


def test_per_shape_variants_come_after_the_common_ones_each_once(tmp_path):
    from tuner.eval_cli import parse_args, variants_for
    from tuner.shapes import Shape

    base = COL_NAME
    (tmp_path / "v.txt").write_text(f"64_64_64 {ROW_NAME},{base}\n64_64_64 {ROW_NAME}\n")
    args = parse_args(["--mnk", "64_64_64", *EVAL, "--also_variants", base,
                       "--also_variants_per_shape", str(tmp_path / "v.txt")])
    assert [c.name for c in variants_for(args, Shape(64, 64, 64))] == [base, ROW_NAME]
    assert [c.name for c in variants_for(args, Shape(128, 64, 64))] == [base]
