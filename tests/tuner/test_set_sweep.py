"""tuner.set_sweep: which shapes a filter selects, which members of a set each gets, and the CLI over the tables."""
from __future__ import annotations

from kernels import space
from sweep_entries import KNOBS, cfg, entry
from tuner.set_sweep import fits, main, selected, sweep


def test_the_filter_takes_short_k_and_enough_output_tiles():
    assert selected(2048, 2048, 256, 256, 256, 0, float("inf"))        # 16 x 16 = 256 tiles
    assert not selected(2048, 2048, 256, 256, 264, 0, float("inf"))    # fewer than two waves
    assert not selected(16384, 16384, 512, 256, 264, 0, float("inf"))  # K too long
    assert selected(12288, 2048, 128, 256, 264, 0, float("inf"))       # 96 x 16 tiles
    assert not selected(12288, 2048, 128, 256, 264, 1e11, float("inf"))  # below the FLOP floor


def test_a_cluster_must_fit_the_output():
    both = cfg((128, 128, 64), (2, 2))
    assert fits(both, 256, 256) and not fits(both, 128, 4096) and not fits(both, 4096, 255)


def test_each_selected_entry_gets_the_members_it_does_not_run_and_f16_tables_get_fp32_ones():
    a, b, c = cfg((128, 128, 64), (2, 2)), cfg((64, 256, 64), (2, 2)), cfg((128, 128, 64), (1, 2))
    row, f16 = cfg((128, 128, 64), (2, 2), layout="row"), cfg((128, 128, 64), (2, 2), acc="f16")
    runs_b = {"kernel": b.name, "config": b.to_dict(), "runtime": KNOBS}
    entries = [entry(16384, 16384, 256), entry(8192, 8192, 128, runs_b), entry(8192, 8192, 4096),
               entry(16384, 16384, 256, layout="row"), entry(64, 64, 64)]
    found = sweep(entries, [a, b, c, row, f16], "f32")
    assert found == {"16384_16384_256": [a.name, b.name, c.name], "8192_8192_128": [a.name, c.name]}
    assert sweep(entries, [a, row, f16], "f32", layout="row") == {"16384_16384_256": [row.name]}
    assert sweep(entries, [a, f16], "f16") == {"16384_16384_256": [a.name, f16.name], "8192_8192_128": [a.name,
                                                                                                          f16.name]}
    # the graph role's choice counts as run too
    graph_a = dict(entry(16384, 16384, 256), graph={"kernel": a.name, "config": a.to_dict(), "runtime": KNOBS})
    assert sweep([graph_a], [a, c], "f32") == {"16384_16384_256": [c.name]}


def test_the_committed_tables_get_a_list_of_small_k_variants(tmp_path):
    out = tmp_path / "list.txt"
    assert main(["--set", "small_k", "--acc", "f32", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    names = {c.name for c in space.variant_set("small_k") if c.b_layout == "col"}
    shapes = {line.split(" ")[0] for line in lines}
    assert lines and all(set(line.split(" ")[1].split(",")) <= names for line in lines)
    assert {"16384_16384_256", "12288_2048_256"} <= shapes and "16384_16384_512" not in shapes
