"""The tuned tables committed in kernels/tables: they load, cover CUDA-L2's grid, and name only variants of the set
the H200 runs carry (`wide_pdl_mid`), so a retable from the wrong records or variant set fails here, not on the GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from kernels import space
from kernels.tuned_tables import load_tables
from tuner.shapes import read_grid

GRID = Path(__file__).resolve().parents[2] / "tuner" / "grids" / "grid_1000.txt"


@pytest.fixture(scope="module")
def tables():
    return load_tables("sm90")


def test_both_accumulators_cover_the_whole_grid_for_b_col_major(tables):
    assert set(tables) == {"f32", "f16"}
    grid = read_grid(GRID)
    for acc, table in tables.items():
        missing = [s.mnk for s in grid if table.lookup(s.m, s.n, s.k, "col") is None]
        assert not missing, f"{acc}: {len(missing)} grid shapes without an entry, e.g. {missing[:3]}"


def choices(table):
    """Every choice a table makes: each entry's own and, where it has one, its choice for captured calls."""
    for entry in table.entries.values():
        yield entry
        if entry.graph is not None:
            yield entry.graph


def test_every_named_variant_is_in_the_wide_pdl_mid_set_and_runs_its_stated_accumulator(tables):
    wide = {cfg.name for cfg in space.variant_set("wide_pdl_mid")}
    for acc, table in tables.items():
        for entry in choices(table):
            run_acc = entry.acc or acc
            if entry.is_arm:
                continue
            assert entry.kernel in wide, f"{acc}: {entry.kernel} is not built by the wide_pdl_mid set"
            assert entry.config.acc == run_acc and entry.config.b_layout == entry.b_layout
            assert space.supports(entry.config, entry.m, entry.n, entry.k)


def test_only_the_f16_table_borrows_fp32_accumulation(tables):
    assert all(e.acc is None for e in tables["f32"].entries.values())
    borrowed = [e for e in tables["f16"].entries.values() if e.acc == "f32"]
    meta = tables["f16"].meta
    assert borrowed and len(borrowed) == meta.get("confirmed", meta["tuner"])["borrowed_f32"]


def test_graph_choices_differ_from_the_eager_ones_and_are_counted(tables):
    for table in tables.values():
        graph = [e for e in table.entries.values() if e.graph is not None]
        confirmed = table.meta.get("confirmed")
        expected = confirmed["graph_alternatives"] if confirmed else table.meta["tuner"]["graph"]["alternatives"]
        assert len(graph) == expected
        assert all((e.kernel, e.config, e.runtime, e.acc) != (e.graph.kernel, e.graph.config, e.graph.runtime,
                                                               e.graph.acc) for e in graph)


@pytest.mark.parametrize("acc", ["f32", "f16"])
def test_the_committed_tables_rebuild_byte_for_byte_from_the_records(acc, tmp_path, capsys):
    from tuner.committed_tables import main, table_path
    assert main(["--out-dir", str(tmp_path), "--acc", acc]) == 0
    capsys.readouterr()
    assert table_path(acc, tmp_path).read_bytes() == table_path(acc).read_bytes(), (
        f"kernels/tables/sm90_{acc}.json is not what tuner/committed_tables.py builds from the records")


def test_the_benchmark_corrected_tables_build_and_differ_only_where_the_benchmark_says(tmp_path, capsys):
    """--confirm (tuner/confirm.py on session 8's grid benchmark, on by default since session 9's A/B): valid tables
    that differ from the uncorrected ones only where the benchmark saw one of our arms >= 3% faster."""
    from kernels.tuned_tables import load_tables
    from tuner.committed_tables import CONFIRM_BY_DEFAULT, main
    assert main(["--out-dir", str(tmp_path / "on"), "--acc", "f32", "--confirm"]) == 0
    assert main(["--out-dir", str(tmp_path / "off"), "--acc", "f32", "--no-confirm"]) == 0
    capsys.readouterr()
    corrected, plain = load_tables("sm90", tmp_path / "on")["f32"], load_tables("sm90", tmp_path / "off")["f32"]
    changed = [key for key, entry in corrected.entries.items() if entry != plain.entries[key]]
    assert 0 < len(changed) < len(plain.entries) // 10
    assert corrected.meta["confirmed"]["graph"] + corrected.meta["confirmed"]["eager"] >= len(changed)
    assert "confirmed" not in plain.meta
    assert ("confirmed" in load_tables("sm90")["f32"].meta) == CONFIRM_BY_DEFAULT
