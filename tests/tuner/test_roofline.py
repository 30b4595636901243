"""The roofline a grid run is read against (tuner/roofline.py), on hand-made timings with known shares."""
import json

import pytest

from tuner import roofline, summary
from tuner.correctness import CheckResult
from tuner.results import competitor_record, shape_record, write_results
from tuner.shapes import Shape

H200 = roofline.for_gpu("NVIDIA H200")


def test_the_bound_is_the_slower_of_compute_and_memory_at_the_datasheet_peaks():
    assert (H200.flops, H200.bytes_per_s) == (989.4e12, 4.8e12) and H200.ridge == pytest.approx(206.1, abs=0.1)
    big, skinny = Shape(8192, 8192, 8192), Shape(128, 8192, 4096)
    assert H200.bound_us(*big) == pytest.approx(2 * 8192**3 / 989.4e12 * 1e6)             # compute: 1111 µs
    assert H200.bound_us(*skinny) == pytest.approx(2 * (128 * 4096 + 4096 * 8192 + 128 * 8192) / 4.8e12 * 1e6)
    assert roofline.intensity(*big) > H200.ridge > roofline.intensity(*skinny)
    assert roofline.for_gpu("NVIDIA H100 PCIe").bytes_per_s == 2.0e12
    assert roofline.for_gpu("NVIDIA H100 80GB HBM3").bytes_per_s == 3.35e12
    assert roofline.for_gpu("Tesla T4") is None and roofline.for_gpu(None) is None


def _rec(shape, times):
    ok = CheckResult(True, 1e-4, 0.0)
    return shape_record(shape, {name: competitor_record(shape, ok, {"kernel": us, "call": us + 10})
                                for name, us in times.items()})


def test_shares_summary_and_the_summary_cli_section(tmp_path):
    skinny, big, tiny = Shape(128, 8192, 4096), Shape(8192, 8192, 8192), Shape(64, 64, 64)
    on_roof = H200.bound_us(*skinny)
    records = [_rec(skinny, {"ours": on_roof * 1.25, "torch.matmul": on_roof * 1.25 * 1.05}),   # share 0.8
               _rec(big, {"ours": H200.bound_us(*big) * 1.4, "torch.matmul": H200.bound_us(*big) * 1.4}),
               _rec(tiny, {"ours": 3.0, "torch.matmul": 4.0})]
    paths = write_results(tmp_path / "run", records, {"gpu": "NVIDIA H200", "acc": "f32"})
    rows = roofline.shares(summary.read_long_csv(paths["csv"]), H200)
    got = {(r["mnk"], r["competitor"]): r for r in rows}
    assert got[(skinny.mnk, "ours")]["share"] == pytest.approx(0.8) and got[(skinny.mnk, "ours")]["memory_bound"]
    assert got[(big.mnk, "ours")]["share"] == pytest.approx(1 / 1.4) and not got[(big.mnk, "ours")]["memory_bound"]
    s = roofline.summarize(rows)
    assert s["by_competitor"]["ours"]["memory-bound"]["shapes"] == 2                       # skinny and tiny
    assert s["by_competitor"]["ours"]["compute-bound"]["share"] == pytest.approx(1 / 1.4)
    assert [r["mnk"] for r in s["headroom"]] == [big.mnk, skinny.mnk]   # tiny: bound < 10 µs, launch-limited
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "s")]) == 0
    data = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert data["roofline"]["peaks"] == "989 TFLOP/s, 4.80 TB/s" and (tmp_path / "s" / "roofline.png").stat().st_size
    assert "roofline share" in (tmp_path / "s" / "summary.md").read_text()


def test_an_unknown_gpu_gets_a_roofline_only_from_both_peaks(tmp_path):
    paths = write_results(tmp_path / "run", [_rec(Shape(1024, 1024, 1024), {"ours": 5.0, "torch.matmul": 6.0})],
                          {"gpu": "test"})
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "a"), "--no_plots"]) == 0
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["roofline"] is None
    assert summary.main(["--results", str(paths["csv"]), "--out", str(tmp_path / "b"), "--no_plots",
                         "--peak_tflops", "500", "--peak_tbps", "2"]) == 0
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["roofline"]["peaks"] == "500 TFLOP/s, 2.00 TB/s"
