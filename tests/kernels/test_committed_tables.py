"""The tuned tables committed in kernels/tables: they load, cover CUDA-L2's grid in both B layouts, and name only
variants of the sets the H200 runs tuned over (`wide_pdl_mid` for col, its row twins for row), so a retable from the
wrong records or variant set fails here, not on the GPU."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kernels import space
from kernels.tuned_tables import load_tables
from tuner.shapes import read_grid

REPO = Path(__file__).resolve().parents[2]
GRID = REPO / "tuner" / "grids" / "grid_1000.txt"


@pytest.fixture(scope="module")
def tables():
    return load_tables("sm90")


def test_both_accumulators_cover_the_whole_grid_for_b_col_major(tables):
    assert set(tables) == {"f32", "f16"}
    grid = read_grid(GRID)
    for acc, table in tables.items():
        missing = [s.mnk for s in grid if table.lookup(s.m, s.n, s.k, "col") is None]
        assert not missing, f"{acc}: {len(missing)} grid shapes without an entry, e.g. {missing[:3]}"


def test_row_major_entries_cover_the_whole_grid(tables):
    """The row-layout tuning (session 10, resumed in session 12 for the largest shapes) finished every grid shape, and
    every shape its records hold has an entry of both tables."""
    from tuner.committed_tables import ROW_RECORDS
    from tuner.retable import read_run
    grid = {s.mnk for s in read_grid(GRID)}
    for acc, table in tables.items():
        base = {r["mnk"] for r in read_run("+".join(str(REPO / p) for p in ROW_RECORDS[0].split("+")), acc, "row")}
        rows = {f"{e.m}_{e.n}_{e.k}" for e in table.entries.values() if e.b_layout == "row"}
        assert base == grid and rows == grid, f"{acc}: {len(grid - rows)} grid shapes without a row entry"


def graph_choices(table):
    return [entry.graph for entry in table.entries.values() if entry.graph is not None]


def choices(table):
    """Every choice a table makes: each entry's own and, where it has one, its choice for captured calls."""
    for entry in table.entries.values():
        yield entry
        if entry.graph is not None:
            yield entry.graph


def test_every_named_variant_is_in_the_set_its_layout_was_tuned_over_and_runs_its_stated_accumulator(tables):
    # splitk (session 13) and splitk_cluster (session 14): tuned for both layouts
    splitk = {cfg.name for cfg in space.variant_sets("splitk,splitk_cluster")}
    tuned_over = {"col": ("wide_pdl_mid,splitk,splitk_cluster",
                          {cfg.name for cfg in space.variant_set("wide_pdl_mid")} | splitk),
                  "row": ("row twins of wide_pdl_mid, splitk,splitk_cluster",
                          {replace(cfg, b_layout="row").name for cfg in space.variant_set("wide_pdl_mid")} | splitk)}
    for acc, table in tables.items():
        graph = {id(entry) for entry in graph_choices(table)}
        for entry in choices(table):
            run_acc = entry.acc or acc
            if entry.is_arm:
                continue
            name, members = tuned_over[entry.b_layout]
            # or the l2_prefetch twin (capped or not) of a member (tuner/prefetch_twins.py), as a graph choice only
            base = replace(entry.config, l2_prefetch=False, l2_prefetch_kb=0)
            tuned = base.name if id(entry) in graph else entry.kernel
            assert tuned in members, f"{acc}: {entry.kernel} is not built by the {name} set"
            assert entry.config.acc == run_acc and entry.config.b_layout == entry.b_layout
            assert space.supports(entry.config, entry.m, entry.n, entry.k)


def stated_total(meta: dict, b_layout: str, key: str) -> int:
    """A layout's total as the table's last step states it: the last late round's A/B reverts (LATE_AB_REVERTS), else
    its late round (LATE_ROUNDS: col, then row), else the L2 prefetch twins, else an A/B's reverts, else the
    benchmark's corrections, else tuning."""
    from tuner.ab_revert import record_name
    from tuner.committed_tables import LATE_AB_REVERTS, LATE_ROUNDS_BY_DEFAULT, REPO
    suffix = "" if b_layout == "col" else f"_{b_layout}"
    late_ab = {record_name(REPO / spec[acc]["candidate"]) for round_number, specs in LATE_AB_REVERTS.items()
               if round_number <= LATE_ROUNDS_BY_DEFAULT for spec in specs for acc in spec}
    reverts = list(meta.get("ab_reverted", {}).items())
    if reverts and reverts[-1][0] in late_ab:
        return reverts[-1][1]["totals"][b_layout][key]
    if b_layout in ("col", "row")[:LATE_ROUNDS_BY_DEFAULT]:
        return meta[f"confirmed{suffix}"][key]
    if "l2_prefetch_twins" in meta:
        return meta["l2_prefetch_twins"]["totals"][b_layout][key]
    if reverts and "totals" in reverts[-1][1]:
        return reverts[-1][1]["totals"][b_layout][key]
    if f"confirmed{suffix}" in meta:
        return meta[f"confirmed{suffix}"][key]
    tuner = meta[f"tuner{suffix}"]
    return tuner[key] if key == "borrowed_f32" else tuner["graph"]["alternatives"]


@pytest.mark.parametrize("b_layout", ["col", "row"])
def test_only_the_f16_table_borrows_fp32_accumulation(tables, b_layout):
    assert all(e.acc is None for e in tables["f32"].entries.values())
    borrowed = [e for e in tables["f16"].entries.values() if e.acc == "f32" and e.b_layout == b_layout]
    meta = tables["f16"].meta
    assert borrowed and len(borrowed) == stated_total(meta, b_layout, "borrowed_f32")


@pytest.mark.parametrize("b_layout", ["col", "row"])
def test_graph_choices_differ_from_the_eager_ones_and_are_counted(tables, b_layout):
    for table in tables.values():
        graph = [e for e in table.entries.values() if e.graph is not None and e.b_layout == b_layout]
        assert len(graph) == stated_total(table.meta, b_layout, "graph_alternatives")
        assert all((e.kernel, e.config, e.runtime, e.acc) != (e.graph.kernel, e.graph.config, e.graph.runtime,
                                                               e.graph.acc) for e in graph)


@pytest.mark.parametrize("acc", ["f32", "f16"])
def test_the_committed_tables_rebuild_byte_for_byte_from_the_records(acc, tmp_path, capsys):
    from tuner.committed_tables import main, table_path
    assert main(["--out-dir", str(tmp_path), "--acc", acc]) == 0
    capsys.readouterr()
    assert table_path(acc, tmp_path).read_bytes() == table_path(acc).read_bytes(), (
        f"kernels/tables/sm90_{acc}.json is not what tuner/committed_tables.py builds from the records")


@pytest.fixture(scope="module")
def every_round(tmp_path_factory):
    """One f16 build with every col and row round on, and the table after each step (--snapshots DIR: col0..colN,
    row0..rowN): f16, because it takes both runs of a round (its own and the f32 run's fp32-accumulating arms), so
    every round changes some of its entries (col round 5 changes only f16 ones)."""
    from tuner.committed_tables import CONFIRM_ROUNDS, ROW_CONFIRM_ROUNDS, main
    snapshots = tmp_path_factory.mktemp("rounds")
    assert main(["--out-dir", str(snapshots / "out"), "--acc", "f16", "--confirm-rounds", str(len(CONFIRM_ROUNDS)),
                 "--confirm-row-rounds", str(len(ROW_CONFIRM_ROUNDS)), "--snapshots", str(snapshots)]) == 0
    return snapshots


def test_each_round_of_benchmark_corrections_builds_and_changes_only_a_few_entries(every_round):
    """--confirm-rounds N (tuner/confirm.py on the grid benchmarks of CONFIRM_ROUNDS; round 1 on by default since
    session 9's A/B): valid tables that differ from the round before only where that benchmark saw one of our arms
    >= 3% faster, and whose meta records every round applied. That the default rounds give the committed tables is
    the byte-for-byte test above."""
    from tuner.committed_tables import CONFIRM_ROUNDS
    built = [load_tables("sm90", every_round / f"col{rounds}")["f16"] for rounds in range(len(CONFIRM_ROUNDS) + 1)]
    assert "confirmed" not in built[0].meta
    for rounds in range(1, len(built)):
        before, after = built[rounds - 1], built[rounds]
        changed = [key for key, entry in after.entries.items() if entry != before.entries[key]]
        assert 0 < len(changed) < sum(key[3] == "col" for key in before.entries) // 5, f"col round {rounds}"
        assert all(key[3] == "col" for key in changed)
        record, depth = after.meta["confirmed"], 1
        assert record["graph"] + record["eager"] >= len(changed)
        while "after" in record:
            record, depth = record["after"], depth + 1
        assert depth == rounds


def test_row_rounds_of_benchmark_corrections_change_only_a_few_row_entries(every_round):
    """--confirm-row-rounds N: the row entries corrected by `--b_layout row` grid runs (ROW_CONFIRM_ROUNDS); the col
    entries and their record stay as they are, the row round is recorded apart (meta confirmed_row)."""
    from tuner.committed_tables import ROW_CONFIRM_ROUNDS
    built = [load_tables("sm90", every_round / f"row{rounds}")["f16"] for rounds in range(len(ROW_CONFIRM_ROUNDS) + 1)]
    for rounds in range(1, len(built)):
        before, after = built[rounds - 1], built[rounds]
        changed = [key for key, entry in after.entries.items() if entry != before.entries[key]]
        assert changed and all(key[3] == "row" for key in changed)
        assert len(changed) < sum(key[3] == "row" for key in before.entries) // 5
        assert after.meta["confirmed"] == before.meta["confirmed"]
        record = after.meta["confirmed_row"]
        assert record["graph"] + record["eager"] >= len(changed)


def test_late_rounds_correct_the_finished_tables_one_layout_each(tmp_path, capsys):
    """--late-rounds N (LATE_ROUNDS: grids of the finished tables, applied after the twins and the A/B reverts; rounds
    1-2 on since session 44's A/B, round 3 since session 49's): each round changes a few entries of its own layout,
    only where the grid's table had the same choice, and is recorded after the rounds before it. Session 39's col
    round moves f16 graph choices the build's early rounds could not (their entries differed from the grid's table
    there)."""
    from tuner.committed_tables import LATE_ROUNDS, LATE_ROUNDS_BY_DEFAULT, main
    assert LATE_ROUNDS_BY_DEFAULT == 3   # A/B'd on the H200: h200-2026-12-06-s44/call3; round 3: -s49/call1
    assert main(["--out-dir", str(tmp_path / "out"), "--acc", "f16", "--late-rounds", str(len(LATE_ROUNDS)),
                 "--snapshots", str(tmp_path)]) == 0
    capsys.readouterr()
    start = load_tables("sm90", tmp_path / "late0")["f16"]   # the finished tables, before their identity stamps
    built = [load_tables("sm90", tmp_path / f"late{rounds}")["f16"] for rounds in range(1, len(LATE_ROUNDS) + 1)]
    before = start
    for rounds, after in enumerate(built, 1):
        layout = ("col", "row", "col")[rounds - 1]   # round 3: session 44's split-K sweep
        changed = [key for key, entry in after.entries.items() if entry.graph != before.entries[key].graph
                   or entry.kernel != before.entries[key].kernel]
        assert 0 < len(changed) < 20 and all(key[3] == layout for key in changed), (rounds, changed)
        record = after.meta[{"col": "confirmed", "row": "confirmed_row"}[layout]]
        assert record["runs"] == ["f16", "f32:kernel"] and record["changed_since_benchmark"] == 0
        assert record["after"] == before.meta[{"col": "confirmed", "row": "confirmed_row"}[layout]]
        before = after
