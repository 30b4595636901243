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


def test_each_round_of_benchmark_corrections_builds_and_changes_only_a_few_entries(tmp_path, capsys):
    """--confirm-rounds N (tuner/confirm.py on the grid benchmarks of CONFIRM_ROUNDS; round 1 on by default since
    session 9's A/B): valid tables that differ from the round before only where that benchmark saw one of our arms
    >= 3% faster, and whose meta records every round applied."""
    from kernels.tuned_tables import load_tables
    from tuner.committed_tables import CONFIRM_ROUNDS, CONFIRM_ROUNDS_BY_DEFAULT, main
    built = []
    for rounds in range(len(CONFIRM_ROUNDS) + 1):
        assert main(["--out-dir", str(tmp_path / str(rounds)), "--acc", "f32", "--confirm-rounds", str(rounds)]) == 0
        built.append(load_tables("sm90", tmp_path / str(rounds))["f32"])
    capsys.readouterr()
    assert "confirmed" not in built[0].meta
    for rounds in range(1, len(built)):
        before, after = built[rounds - 1], built[rounds]
        changed = [key for key, entry in after.entries.items() if entry != before.entries[key]]
        assert 0 < len(changed) < len(before.entries) // 10
        record, depth = after.meta["confirmed"], 1
        assert record["graph"] + record["eager"] >= len(changed)
        while "after" in record:
            record, depth = record["after"], depth + 1
        assert depth == rounds
    assert load_tables("sm90")["f32"].entries == built[CONFIRM_ROUNDS_BY_DEFAULT].entries
