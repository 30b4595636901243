"""Tuned tables (Contract 3): write -> read round trip, validation, merging; readable by the dispatcher's loader."""
import json

import pytest

from tuner.tables import entry, merge_entries, read_table, table_path, validate, write_table

META = {"gpu": "NVIDIA H200", "arch": "sm90", "acc": "f32", "date": "2026-01-01", "commit": "abc", "driver": "570",
        "cuda": "12.8", "torch": "2.13"}


def _entries():
    return [entry(64, 4096, 64, "col", "cublas", {"kind": "gemmex_tn"}, {}, 3.0, 3.0),
            entry(128, 128, 128, "row", "cublas", {"kind": "gemmex_nn"}, {}, 2.5, 2.5)]


def test_round_trip(tmp_path):
    path = write_table(table_path(tmp_path, "sm90", "f32"), META, _entries())
    assert path.name == "sm90_f32.json"
    table = read_table(path)
    assert table["meta"]["gpu"] == "NVIDIA H200"
    assert {(e["m"], e["b_layout"]) for e in table["entries"]} == {(64, "col"), (128, "row")}
    assert table["entries"][0]["runtime"] == {"raster": 0, "swizzle": 0, "splits": 0}


def test_validation_catches_missing_meta_duplicates_and_bad_times(tmp_path):
    bad = _entries() + [_entries()[0]]
    assert any("duplicates" in p for p in validate({"meta": META, "entries": bad}))
    assert any("meta lacks" in p for p in validate({"meta": {}, "entries": []}))
    knobs_on_cublas = entry(1, 2, 3, "col", "cublas", {"kind": "gemmex_tn"}, {"splits": 2}, 1.0, 1.0)
    assert any("no runtime knobs" in p for p in validate({"meta": META, "entries": [knobs_on_cublas]}))
    slow = dict(_entries()[0], us=0.0)
    with pytest.raises(ValueError):
        write_table(tmp_path / "t.json", META, [slow])


def test_merge_replaces_same_shape_and_layout():
    old = _entries()
    new = [entry(64, 4096, 64, "col", "cublas", {"kind": "gemmex_tn"}, {}, 2.0, 3.0)]
    merged = {(e["m"], e["b_layout"]): e["us"] for e in merge_entries(old, new)}
    assert merged == {(64, "col"): 2.0, (128, "row"): 2.5}


def test_the_dispatchers_loader_reads_what_we_write(tmp_path):
    tuned = pytest.importorskip("kernels.tuned_tables")
    from kernels import space

    cfg = space.variant_set("default")[0]
    knobs = {name: values[-1] for name, values in space.runtime_knobs(cfg).items()}
    entries = _entries() + [entry(256, 256, 256, cfg.b_layout, cfg.name, cfg.to_dict(), knobs, 1.0, 1.2)]
    meta = dict(META, acc=cfg.acc)
    path = write_table(table_path(tmp_path, "sm90", cfg.acc), meta, entries if cfg.acc == "f32" else entries[2:])
    table = tuned.load_table(path)
    got = table.lookup(256, 256, 256, cfg.b_layout)
    assert got.kernel == cfg.name and got.config == cfg and got.runtime == knobs
    assert json.loads(path.read_text())["meta"]["commit"] == "abc"
