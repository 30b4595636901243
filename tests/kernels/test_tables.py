"""Tuned-table loading (Contract 3): valid tables load, bad ones fail with the file, entry and field named."""
from __future__ import annotations

import copy
import json

import pytest

from kernels.config import KernelConfig
from kernels.dispatch import Dispatcher
from kernels.tuned_tables import (TableError, TunedTable, dump_table, load_default_tables, load_table, load_tables,
                                  overlay)

CFG = KernelConfig("sm90", "f32", "col", (128, 128, 64), cluster=(2, 1), schedule="cooperative", scheduler="streamk")


def good() -> dict:
    return {
        "meta": {"gpu": "NVIDIA H200", "arch": "sm90", "acc": "f32", "date": "2026-11-30", "commit": "abc",
                 "driver": "580", "cuda": "13.0", "torch": "2.11"},
        "entries": [
            {"m": 64, "n": 4096, "k": 64, "b_layout": "col", "kernel": CFG.name, "config": CFG.to_dict(),
             "runtime": {"raster": 1, "swizzle": 2, "splits": 4}, "us": 2.1, "cublas_us": 2.9},
            {"m": 64, "n": 4096, "k": 64, "b_layout": "row", "kernel": "cublaslt", "config": {"algo_index": 5}},
            {"m": 128, "n": 128, "k": 128, "b_layout": "row", "kernel": "cublas"},
        ],
    }


def write(tmp_path, data, name="sm90_f32.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_valid_table_loads_and_looks_up(tmp_path):
    t = load_table(write(tmp_path, good()))
    assert (t.arch, t.acc, len(t)) == ("sm90", "f32", 3)
    e = t.lookup(64, 4096, 64, "col")
    assert e.config == CFG and e.runtime == {"raster": 1, "swizzle": 2, "splits": 4} and e.us == 2.1
    assert t.lookup(64, 4096, 64, "row").config == {"algo_index": 5} and t.lookup(64, 4096, 64, "row").is_arm
    assert t.lookup(64, 4096, 65, "col") is None


def test_an_f16_table_may_name_f32_accumulating_choices(tmp_path):
    data = good()
    data["meta"]["acc"] = "f16"
    for e in data["entries"]:
        e["acc"] = "f32"
    table = load_table(write(tmp_path, data, "sm90_f16.json"))
    assert [table.lookup(64, 4096, 64, layout).acc for layout in ("col", "row")] == ["f32", "f32"]
    assert table.lookup(64, 4096, 64, "col").config == CFG
    data["entries"][2]["acc"] = "f16"  # the table's own accumulator, spelled out
    assert load_table(write(tmp_path, data, "sm90_f16.json")).lookup(128, 128, 128, "row").acc is None


def test_an_entry_may_name_another_choice_for_captured_calls(tmp_path):
    data = good()
    data["entries"][2]["graph"] = {"kernel": "cublaslt", "config": {"algo_index": 4}, "us": 1.5}
    data["entries"][0]["graph"] = {"kernel": CFG.name, "config": CFG.to_dict(), "runtime": {"splits": 2}}
    table = load_table(write(tmp_path, data))
    graph = table.lookup(128, 128, 128, "row").graph
    assert (graph.kernel, graph.config, graph.us, graph.graph) == ("cublaslt", {"algo_index": 4}, 1.5, None)
    assert (graph.m, graph.n, graph.k, graph.b_layout) == (128, 128, 128, "row")  # the entry's own shape
    assert table.lookup(64, 4096, 64, "col").graph.runtime == {"splits": 2}
    assert table.lookup(64, 4096, 64, "row").graph is None


def test_missing_tables_are_simply_absent(tmp_path):
    assert load_tables("sm90", tmp_path) == {}
    write(tmp_path, good())
    assert set(load_tables("sm90", tmp_path)) == {"f32"}


def test_dispatcher_uses_loaded_tables(tmp_path):
    write(tmp_path, good())
    d = Dispatcher(tables=load_tables("sm90", tmp_path), load_kernel=lambda cfg: None,
                   arm_factory=lambda name, options: None)
    assert d.select(64, 4096, 64, "col").kernel == CFG.name
    assert (d.select(64, 4096, 64, "row").kernel, d.select(64, 4096, 64, "row").fallback) == ("cublaslt", None)


def test_extra_tables_overlay_the_committed_ones_and_win_where_both_hold_a_shape(tmp_path, monkeypatch):
    committed, extra, f16_only = tmp_path / "committed", tmp_path / "extra", tmp_path / "f16"
    for d in (committed, extra, f16_only):
        d.mkdir()
    write(committed, good())
    mine = good()
    mine["entries"] = [{"m": 128, "n": 128, "k": 128, "b_layout": "row", "kernel": "cublaslt",
                        "config": {"algo_index": 2}},
                       {"m": 1000, "n": 3000, "k": 704, "b_layout": "col", "kernel": CFG.name, "config": CFG.to_dict()}]
    write(extra, mine)
    f16 = good()
    f16["meta"]["acc"] = "f16"
    f16["entries"][0]["acc"] = "f32"  # its config accumulates in f32: a more precise choice
    write(f16_only, f16, "sm90_f16.json")
    merged = overlay(load_tables("sm90", committed), load_tables("sm90", extra))["f32"]
    assert len(merged) == 4 and merged.lookup(1000, 3000, 704, "col").config == CFG
    assert merged.lookup(128, 128, 128, "row").config == {"algo_index": 2}  # the extra table's entry wins
    assert merged.lookup(64, 4096, 64, "col").config == CFG  # the committed entries stay
    assert merged.meta["overlays"] == [str(extra / "sm90_f32.json")]

    import os

    monkeypatch.setattr("kernels.tuned_tables.TABLES_DIR", committed)
    monkeypatch.setenv("HGEMM_EXTRA_TABLES", os.pathsep.join([str(extra), str(f16_only)]))
    tables = load_default_tables("sm90")
    assert set(tables) == {"f32", "f16"} and len(tables["f32"]) == 4 and len(tables["f16"]) == 3
    monkeypatch.delenv("HGEMM_EXTRA_TABLES")
    assert len(load_default_tables("sm90")["f32"]) == 3
    monkeypatch.setenv("HGEMM_EXTRA_TABLES", str(tmp_path / "missing"))
    with pytest.raises(TableError, match="HGEMM_EXTRA_TABLES"):
        load_default_tables("sm90")


def test_dump_table_round_trips(tmp_path):
    data = good()
    path = tmp_path / "sm90_f32.json"
    dump_table(data["meta"], data["entries"], path)
    assert load_table(path).lookup(128, 128, 128, "row").kernel == "cublas"
    with pytest.raises(TableError, match="sm90_f32.json"):
        dump_table(data["meta"], data["entries"], tmp_path / "sm90_f16.json")


def mutated(fn):
    data = copy.deepcopy(good())
    fn(data)
    return data


BAD = [
    ("not an object", lambda d: d.clear() or d.update({"entries": []}), "top-level keys"),
    ("missing acc", lambda d: d["meta"].pop("acc"), "missing required key 'acc'"),
    ("bad acc", lambda d: d["meta"].update(acc="bf16"), "meta.acc"),
    ("bad arch", lambda d: d["meta"].update(arch="hopper"), "meta.arch"),
    ("meta type", lambda d: d["meta"].update(commit=123), "meta.commit"),
    ("entries not list", lambda d: d.update(entries={}), "entries: must be a list"),
    ("negative m", lambda d: d["entries"][0].update(m=-4), r"entries\[0\]\.m: must be a positive integer"),
    ("bool k", lambda d: d["entries"][0].update(k=True), r"entries\[0\]\.k"),
    ("float n", lambda d: d["entries"][0].update(n=64.0), r"entries\[0\]\.n"),
    ("layout", lambda d: d["entries"][1].update(b_layout="column"), r"entries\[1\]\.b_layout"),
    ("unknown key", lambda d: d["entries"][2].update(speedup=1.2), r"entries\[2\]: unknown keys \['speedup'\]"),
    ("no kernel", lambda d: d["entries"][2].pop("kernel"), r"entries\[2\]\.kernel"),
    ("duplicate", lambda d: d["entries"].append(dict(d["entries"][2])), r"entries\[3\]: duplicate shape"),
    ("config missing", lambda d: d["entries"][0].pop("config"), r"entries\[0\]\.config: a built variant needs"),
    ("config invalid", lambda d: d["entries"][0]["config"].update(schedule="zigzag"), "not a valid KernelConfig"),
    ("config unknown key", lambda d: d["entries"][0]["config"].update(colour=1), "not a valid KernelConfig"),
    ("name mismatch", lambda d: d["entries"][0].update(kernel="sm90_other"), "does not match its config"),
    ("acc mismatch", lambda d: d["meta"].update(acc="f16"), r"entries\[0\]\.config\.acc"),
    ("layout mismatch", lambda d: d["entries"][0].update(b_layout="row"), r"entries\[0\]\.config\.b_layout"),
    ("knob not honoured", lambda d: d["entries"][0]["runtime"].update(splits=5), r"runtime\.splits: 5 is not"),
    ("unknown knob", lambda d: d["entries"][0]["runtime"].update(warp=2), r"entries\[0\]\.runtime"),
    ("negative knob", lambda d: d["entries"][0]["runtime"].update(raster=-1), r"runtime\.raster"),
    ("arm knobs", lambda d: d["entries"][2].update(runtime={"splits": 2}), "takes no runtime knobs"),
    ("arm option", lambda d: d["entries"][1]["config"].update(tile=3), r"entries\[1\]\.config"),
    ("arm kind", lambda d: d["entries"][1]["config"].update(kind="gemmex"), r"config\.kind"),
    ("algo index", lambda d: d["entries"][1]["config"].update(algo_index=-2), r"config\.algo_index"),
    ("algo index past the list", lambda d: d["entries"][1]["config"].update(algo_index=32), r"in \[0, 32\)"),
    ("algo index of another kind", lambda d: d["entries"][1]["config"].update(kind="lt_heuristic"),
     r"config\.algo_index: only kind 'lt_algo'"),
    ("less precise acc", lambda d: d["entries"][2].update(acc="f16"), r"entries\[2\]\.acc: an acc='f32' table"),
    ("unknown acc", lambda d: d["meta"].update(acc="f16") or d["entries"][0].update(acc="bf16"), r"entries\[0\]\.acc"),
    ("us", lambda d: d["entries"][0].update(us=0), r"entries\[0\]\.us"),
    ("graph not an object", lambda d: d["entries"][2].update(graph="cublaslt"), r"entries\[2\]\.graph: must be"),
    ("graph key", lambda d: d["entries"][2].update(graph={"kernel": "cublas", "m": 8}),
     r"entries\[2\]\.graph: unknown keys \['m'\]"),
    ("graph in graph", lambda d: d["entries"][2].update(graph={"kernel": "cublas", "graph": {}}),
     r"entries\[2\]\.graph: unknown keys \['graph'\]"),
    ("graph choice invalid", lambda d: d["entries"][2].update(graph={"kernel": "cublaslt", "config": {"algo_index": 99}}),
     r"entries\[2\]\.graph\.config\.algo_index"),
    ("graph variant of another layout", lambda d: d["entries"][1].update(
        graph={"kernel": CFG.name, "config": CFG.to_dict()}), r"entries\[1\]\.graph\.config\.b_layout"),
    ("cublas_us", lambda d: d["entries"][0].update(cublas_us="fast"), r"entries\[0\]\.cublas_us"),
]


@pytest.mark.parametrize("what, change, message", BAD, ids=[b[0] for b in BAD])
def test_bad_tables_fail_with_a_clear_message(tmp_path, what, change, message):
    path = write(tmp_path, mutated(change))
    with pytest.raises(TableError, match=message) as info:
        load_table(path)
    assert str(path) in str(info.value)


def test_file_name_must_match_meta(tmp_path):
    with pytest.raises(TableError, match="must be named 'sm90_f32.json'"):
        load_table(write(tmp_path, good(), name="sm90_f16.json"))


def test_invalid_json_names_the_file(tmp_path):
    path = tmp_path / "sm90_f32.json"
    path.write_text('{"meta": ')
    with pytest.raises(TableError, match="not valid JSON"):
        load_table(path)


def test_broken_table_stops_loading_for_that_arch(tmp_path):
    write(tmp_path, mutated(lambda d: d["entries"][0].update(m=0)))
    with pytest.raises(TableError):
        load_tables("sm90", tmp_path)


def test_from_dict_without_file():
    assert len(TunedTable.from_dict(good())) == 3


def test_tuned_cublaslt_entry_round_trips_and_the_dispatcher_binds_its_index(tmp_path):
    lt = {"m": 8192, "n": 512, "k": 512, "b_layout": "col", "kernel": "cublaslt",
          "config": {"kind": "lt_algo", "algo_index": 31}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0},
          "us": 9.65, "cublas_us": 10.4}
    data = good()
    data["entries"].append(lt)
    dump_table(data["meta"], data["entries"], tmp_path / "sm90_f32.json")
    entry = load_table(tmp_path / "sm90_f32.json").lookup(8192, 512, 512, "col")
    assert (entry.kernel, entry.config, entry.runtime, entry.us) == ("cublaslt", lt["config"], lt["runtime"], 9.65)
    made = []
    d = Dispatcher(tables=load_tables("sm90", tmp_path), load_kernel=lambda cfg: None,
                   arm_factory=lambda name, options: made.append((name, options)) or (lambda a, b, out, **kw: out),
                   lt_algo_count=lambda *shape: 32)
    sel = d.select(8192, 512, 512, "col")
    assert (sel.kernel, sel.fallback, sel.config) == ("cublaslt", None, lt["config"])
    assert made == [("cublaslt", {"kind": "lt_algo", "algo_index": 31})]
