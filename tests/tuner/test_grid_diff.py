"""tuner.grid_diff: two grid runs compared on their common shapes, the listed (changed) shapes apart from the rest."""
import csv

import pytest

from tuner.grid_diff import diff_rows, main

FIELDS = ["mnk", "competitor", "ok", "kernel_us", "call_us"]


def write_run(path, times):
    """times: {mnk: {competitor: (kernel_us, call_us)}}; a None time is a failed competitor."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for mnk, competitors in times.items():
            for name, t in competitors.items():
                w.writerow({"mnk": mnk, "competitor": name, "ok": str(t is not None),
                            "kernel_us": t[0] if t else "", "call_us": t[1] if t else ""})
    return path


@pytest.fixture
def runs(tmp_path):
    old = write_run(tmp_path / "old.csv", {
        "64_64_64": {"ours": (2.0, 10.0), "torch.matmul": (1.8, 12.0)},      # 0.9x kernel: below the floor
        "128_128_128": {"ours": (3.0, 10.0), "torch.matmul": (3.3, 11.0)},
        "256_256_256": {"ours": (4.0, 10.0), "torch.matmul": (4.0, 10.0)},    # only in the old run
    })
    new = write_run(tmp_path / "new.csv", {
        "64_64_64": {"ours": (1.5, 10.0), "torch.matmul": (1.8, 12.0)},      # the changed entry: 1.2x
        "128_128_128": {"ours": (3.0, 10.0), "torch.matmul": (3.3, 11.0)},
        "512_512_512": {"ours": (5.0, 10.0), "torch.matmul": None},           # torch failed: not comparable
    })
    shapes = tmp_path / "changed.txt"
    shapes.write_text("64_64_64\n")
    return old, new, shapes


def test_listed_shapes_carry_the_change_and_the_rest_is_the_control(runs):
    old, new, _ = runs
    rows = {(r["timing"], r["shapes"]): r for r in diff_rows(old, new, listed={"64_64_64"})}
    listed, rest = rows[("kernel", "listed")], rows[("kernel", "rest")]
    assert listed["n"] == 1 and listed["old"] == pytest.approx(0.9) and listed["new"] == pytest.approx(1.2)
    assert (listed["old_below"], listed["new_below"]) == (1, 0)
    assert rest["n"] == 1 and rest["old"] == pytest.approx(1.1) == rest["new"]
    assert rows[("kernel", "all")]["n"] == 2 and rows[("call", "all")]["new"] == pytest.approx((1.2 * 1.1) ** 0.5)


def test_cli_prints_the_table_and_fails_without_common_shapes(runs, tmp_path, capsys):
    old, new, shapes = runs
    assert main([str(old), str(new), "--shapes", str(shapes)]) == 0
    out = capsys.readouterr().out
    assert "| kernel | listed | 1 | 0.900x | 1.200x | +33.3% | 1 → 0 |" in out
    empty = write_run(tmp_path / "empty.csv", {"1_1_1": {"ours": (1.0, 1.0)}})
    assert main([str(old), str(empty)]) == 1
