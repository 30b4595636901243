"""tuner.ab: the base/candidate ratio is read the right way round in both roles."""
from __future__ import annotations

import gzip
import json

import pytest

from tuner.ab import main, ratios, report


def run(other: str, pairs: list[tuple[float, float]], fail: bool = False) -> dict:
    """pairs: (ours µs, other µs) per shape, the same for both timings."""
    shapes = [{"mnk": f"{i}_64_64", "competitors": {"ours": {"ok": True, "kernel_us": a, "call_us": a},
                                                    other: {"ok": not (fail and i == 0), "kernel_us": b,
                                                            "call_us": b}}}
              for i, (a, b) in enumerate(pairs)]
    return {"meta": {"timings": ["kernel", "call"]}, "shapes": shapes}


def test_both_roles_give_base_over_candidate():
    # the candidate takes 90 µs, the base 100, whichever of the two is `ours`
    assert ratios(run("ours[committed]", [(90, 100)]), "kernel") == ("ours[committed]", [pytest.approx(100 / 90)])
    assert ratios(run("ours[cand]", [(100, 90)]), "call") == ("ours[cand]", [pytest.approx(100 / 90)])


def test_failed_shapes_are_left_out_and_one_other_dispatcher_is_required():
    assert ratios(run("ours[cand]", [(100, 90), (100, 50)], fail=True), "kernel")[1] == [pytest.approx(2.0)]
    two = run("ours[cand]", [(100, 90)])
    two["shapes"][0]["competitors"]["ours[x]"] = {"ok": True, "kernel_us": 1, "call_us": 1}
    with pytest.raises(ValueError):
        ratios(two, "kernel")


def test_report_reads_plain_and_gzipped_runs_and_prints_a_table(tmp_path, capsys):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "results.json").write_text(json.dumps(run("ours[committed]", [(90, 100), (100, 100)])))
    (tmp_path / "B").mkdir()
    with gzip.open(tmp_path / "B" / "results.json.gz", "wt") as f:
        json.dump(run("ours[cand]", [(110, 100)]), f)
    rows = report([tmp_path / "A", tmp_path / "B"])
    assert [(r["run"], r["timing"]) for r in rows] == [("A", "kernel"), ("A", "call"), ("B", "kernel"), ("B", "call")]
    assert rows[0]["candidate_faster_by"] == pytest.approx((100 / 90) ** 0.5) and rows[0]["shapes"] == 2
    assert rows[2]["candidate_faster_by"] == pytest.approx(1.1)
    assert main([str(tmp_path / "A"), str(tmp_path / "B")]) == 0
    assert "| B | ours[cand] | call | 1 | 1.1000x |" in capsys.readouterr().out
