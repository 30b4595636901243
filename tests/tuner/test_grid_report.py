"""tuner.grid_report: a tuned table's own measurements turned into a per-shape CSV, bucket geomeans, the kernel mix
and the grid coverage."""
import csv
import json
import math

import pytest

from tuner.grid_report import grid_rows, kernel_mix, main
from tuner.shapes import parse_mnk


def entry(m, n, k, kernel, us, cublas_us, layout="col"):
    return {"m": m, "n": n, "k": k, "b_layout": layout, "kernel": kernel, "config": {}, "runtime": {}, "us": us,
            "cublas_us": cublas_us}


TABLE = {"meta": {"gpu": "test GPU", "arch": "sm90", "acc": "f32", "date": "today", "commit": "abc"},
         "entries": [entry(64, 64, 64, "cublas", 3.0, 3.0),
                     entry(4096, 4096, 4096, "sm90_f32_col_t128x256x64", 200.0, 220.0),
                     entry(1024, 1024, 1024, "cublaslt", 10.0, 12.5),
                     entry(512, 512, 512, "sm80_f32_col_t64x64x64", 0.0, 5.0)]}  # no time: not reported


def test_rows_carry_the_measured_speedup_and_the_grid_shapes_the_table_lacks():
    grid = [parse_mnk(s) for s in ("64_64_64", "4096_4096_4096", "1024_1024_1024", "512_512_512", "128_128_128")]
    rows, missing = grid_rows(TABLE, grid)
    by = {r["mnk"]: r for r in rows}
    assert set(by) == {"64_64_64", "4096_4096_4096", "1024_1024_1024"}
    assert missing == ["512_512_512/col", "128_128_128/col"]
    assert by["4096_4096_4096"]["speedup"] == pytest.approx(1.1) and by["4096_4096_4096"]["family"] == "sm90"
    assert by["4096_4096_4096"]["tflops"] == pytest.approx(2 * 4096 ** 3 / 200e-6 / 1e12)
    assert by["64_64_64"]["bucket"] == "<1e9" and by["4096_4096_4096"]["bucket"] == ">1e11"
    mix = kernel_mix(rows)
    assert mix["all"] == {"cublas": 1, "sm90": 1, "cublaslt": 1} and mix[">1e11"] == {"sm90": 1}


def test_cli_writes_csv_report_and_plots(tmp_path):
    table = tmp_path / "sm90_f32.json"
    table.write_text(json.dumps(TABLE))
    assert main(["--table", str(table), "--out", str(tmp_path / "out")]) == 0
    with open(tmp_path / "out" / "grid_f32.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    text = (tmp_path / "out" / "grid_f32.md").read_text()
    expected = math.exp((math.log(1.0) + math.log(1.1) + math.log(1.25)) / 3)
    assert f"{expected:.3f}x (n=3)" in text and "test GPU" in text
    assert (tmp_path / "out" / "plots_f32" / "speedup_by_bucket.png").stat().st_size > 0


def test_family_is_the_variant_family_or_the_arm():
    from tuner.grid_report import family

    assert family("sm90_f32_col_t64x64x64_c1x1_sauto_pp_pers_a8_pdl") == "sm90"
    assert family("sm80_f16_row_t64x64x64_w32x32x64_s5_a8") == "sm80"
    assert family("splitk_f32_col_t64x64x64_s4_a8_pdl") == "splitk"
    assert family("cublaslt") == "cublaslt" and family("cublas") == "cublas"
