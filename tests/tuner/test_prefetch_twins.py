"""CPU tests of tuner/prefetch_twins.py: the rule session 30 measured, and how it moves a table's graph choices."""
import json
from dataclasses import replace

import pytest

from kernels.config import KernelConfig
from tuner import prefetch_twins
from kernels.space import l2_prefetch_twin as twin_of
from tuner.prefetch_twins import prefetch_pays, swap_in_twins
from tuner.tables import read_table, write_table

PP64 = KernelConfig("sm90", "f32", "col", (64, 64, 64), schedule="pingpong", scheduler="persistent", pdl=True)
SPLITK = KernelConfig("splitk", "f32", "col", (64, 64, 64), stages=4, schedule="cluster", pdl=True)
COOP128 = KernelConfig("sm90", "f32", "col", (128, 128, 64), schedule="cooperative", scheduler="persistent", pdl=True)


@pytest.mark.parametrize("cfg, shape, pays", [
    (PP64, (64, 128, 512), True),  # 2 CTAs: idle SMs take the next grid early (1.33x in call 1)
    (PP64, (64, 8192, 64), True),  # 128 CTAs, one 16 KB k-tile each (1.14x)
    (PP64, (64, 16384, 512), False),  # 132 CTAs, 8 k-tiles of 16 KB each (0.93x)
    (COOP128, (2048, 1024, 512), False),  # 128 CTAs, 6 stages of 32 KB (0.76x)
    (COOP128, (128, 16384, 128), True),  # 128 CTAs, 2 k-tiles: 64 KB
    (COOP128, (1024, 1024, 4096), True),  # 64 CTAs
])
def test_the_rule_is_the_split_call_1_measured(cfg, shape, pays):
    assert prefetch_pays(cfg, *shape) is pays


def test_only_sm90_and_splitk_pdl_variants_have_a_twin():
    assert twin_of(PP64).l2_prefetch and twin_of(PP64).name == PP64.name + "_l2pf"
    assert twin_of(twin_of(PP64)) is None
    no_pdl = KernelConfig("sm90", "f32", "col", (64, 64, 64), schedule="pingpong", scheduler="persistent")
    assert twin_of(no_pdl) is None and twin_of(SPLITK) == KernelConfig.from_dict({**SPLITK.to_dict(),
                                                                                  "l2_prefetch": True})
    sm80 = KernelConfig("sm80", "f32", "col", (128, 128, 32), warp=(64, 64, 32), stages=4)
    assert twin_of(sm80) is None and twin_of(replace(SPLITK, pdl=False)) is None


@pytest.mark.parametrize("shape, splits, stages, pays", [
    ((64, 64, 8192), 16, 8, True),  # 16 CTAs of 8 k-tiles of 16 KB: 2 MiB in all (1.11x in session 32's call 1)
    ((512, 64, 2048), 8, 4, True),  # 64 CTAs of 4 k-tiles (their K slice): 4 MiB (1.14x)
    ((128, 128, 12288), 16, 8, False),  # 64 CTAs of 8 k-tiles: 8 MiB (0.89x)
    ((1024, 64, 4096), 8, 4, False),  # 128 CTAs of 4 k-tiles: 8 MiB (0.96x)
    ((1024, 1024, 1024), 4, 4, False),  # 132 CTAs (of 256 tiles x 4 splits) of 4 k-tiles
])
def test_a_splitk_variant_counts_its_splits_as_ctas_and_its_whole_grid_prefetch(shape, splits, stages, pays):
    assert prefetch_pays(replace(SPLITK, stages=stages), *shape, splits) is pays


def test_a_capped_twin_counts_only_what_it_prefetches():
    assert prefetch_pays(twin_of(COOP128), 2048, 1024, 512) is False  # 128 CTAs, 6 stages of 32 KB
    assert prefetch_pays(twin_of(COOP128, kb=64), 2048, 1024, 512) is True  # the same, 2 k-tiles
    deep = replace(SPLITK, stages=8)  # splitk: 64 CTAs of 8 k-tiles of 16 KB (8 MiB) -> of 4 (4 MiB)
    assert prefetch_pays(twin_of(deep), 128, 128, 12288, 16) is False
    assert prefetch_pays(twin_of(deep, kb=64), 128, 128, 12288, 16) is True
    assert prefetch_pays(twin_of(SPLITK, kb=64), 1024, 64, 4096, 8) is False  # 128 CTAs of 4 k-tiles: no change


def test_an_sm90_variant_ignores_splits():
    assert prefetch_pays(COOP128, 1024, 1024, 4096, 4) is True  # 64 CTAs (split-K would make 256)


def _choice(cfg, us=3.0):
    return {"kernel": cfg.name, "config": cfg.to_dict(), "runtime": {"raster": 0, "swizzle": 0, "splits": 0}, "us": us}


def _entry(m, n, k, cfg, b_layout="col", **extra):
    return {"m": m, "n": n, "k": k, "b_layout": b_layout, **_choice(cfg), "cublas_us": 4.0, **extra}


def _table(entries):
    return {"meta": {"gpu": "NVIDIA H200", "arch": "sm90", "acc": "f16"}, "entries": entries}


def test_graph_choices_move_eager_ones_stay_and_other_entries_are_untouched():
    cublas = {"kernel": "cublas", "config": {"kind": "gemmex_tn"}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0},
              "us": 2.0}
    table = _table([
        _entry(64, 128, 512, PP64, acc="f32"),  # no graph choice: one is made from the eager choice, acc kept
        _entry(128, 128, 64, PP64, graph=_choice(COOP128, 2.5)),  # its graph choice moves
        _entry(2048, 1024, 512, COOP128),  # the rule says no
        {**_entry(64, 64, 64, PP64), "graph": cublas},  # a cuBLAS graph choice stays
        _entry(64, 128, 512, PP64, b_layout="row"),  # another layout
    ])
    before = json.loads(json.dumps(table))
    assert swap_in_twins(table, "col") == ["64_128_512", "128_128_64"]
    first, second, third, fourth, row = table["entries"]
    assert first["kernel"] == PP64.name and first["graph"]["kernel"] == PP64.name + "_l2pf"
    assert first["graph"]["acc"] == "f32" and first["graph"]["runtime"] == first["runtime"]
    assert KernelConfig.from_dict(first["graph"]["config"]) == twin_of(PP64)
    assert second["graph"]["kernel"] == COOP128.name + "_l2pf" and second["graph"]["us"] == 2.5
    assert second["kernel"] == PP64.name  # the eager choice: a lone call has no grid to overlap
    assert (third, fourth, row) == tuple(before["entries"][2:])


def test_the_cli_writes_a_valid_table_with_its_record_and_totals(tmp_path):
    path = tmp_path / "sm90_f16.json"
    write_table(path, _table([])["meta"], [_entry(64, 128, 512, PP64), _entry(64, 128, 512, PP64, b_layout="row")])
    changed = tmp_path / "changed.txt"
    assert prefetch_twins.main(["--table", str(path), "--out", str(path), "--changed", str(changed)]) == 0
    assert prefetch_twins.main(["--table", str(path), "--out", str(path), "--b-layout", "row"]) == 0
    table = read_table(path)
    record = table["meta"]["l2_prefetch_twins"]
    assert record["moved"] == {"col": 1, "row": 1} and record["max_early_ctas"] == 64
    assert record["totals"]["col"] == record["totals"]["row"] == {"borrowed_f32": 0, "graph_alternatives": 1}
    assert changed.read_text() == "64_128_512\n"
    assert all(e["graph"]["kernel"].endswith("_l2pf") for e in table["entries"])


def test_splitk_graph_choices_move_only_when_asked_and_the_record_keeps_them_apart(tmp_path):
    splitk_entry = {**_entry(64, 64, 8192, PP64), "graph": {**_choice(SPLITK), "runtime": {"raster": 0, "swizzle": 0,
                                                                                           "splits": 8}}}
    table = _table([json.loads(json.dumps(splitk_entry))])
    assert swap_in_twins(table, "col") == []  # sm90 only, by default
    assert swap_in_twins(table, "col", families=("splitk",)) == ["64_64_8192"]
    assert table["entries"][0]["graph"]["kernel"] == SPLITK.name + "_l2pf"
    assert table["entries"][0]["graph"]["runtime"]["splits"] == 8

    path = tmp_path / "sm90_f32.json"
    big = {**splitk_entry, "m": 256, "n": 256, "k": 1024}  # 16 tiles x 8 splits, 2 k-tiles of 16 KB: 4 MiB, pays
    wide = replace(SPLITK, tile=(128, 128, 64), stages=8)
    costly = {**splitk_entry, "m": 2048, "n": 2048, "k": 8192,  # 256 tiles x 2 splits, 8 stages of 32 KB: not
              "graph": {**_choice(wide), "runtime": {"raster": 0, "swizzle": 0, "splits": 2}}}
    write_table(path, _table([])["meta"], [splitk_entry, big, costly])
    assert prefetch_twins.main(["--table", str(path), "--out", str(path), "--family", "splitk"]) == 0
    assert read_table(path)["meta"]["l2_prefetch_twins"]["moved"] == {"col:splitk": 2}
    write_table(path, _table([])["meta"], [splitk_entry, big, costly])
    assert prefetch_twins.main(["--table", str(path), "--out", str(path), "--family", "splitk", "--all"]) == 0
    table = read_table(path)
    assert table["meta"]["l2_prefetch_twins"]["moved"] == {"col:splitk:all": 3}
    assert all(e["graph"]["kernel"].endswith("_l2pf") for e in table["entries"])


def test_capped_twins_move_what_the_rule_leaves_under_their_own_key(tmp_path):
    path = tmp_path / "sm90_f32.json"
    small, costly = _entry(64, 128, 512, PP64), _entry(2048, 1024, 512, COOP128)  # the rule moves one, leaves one
    write_table(path, _table([])["meta"], [small, costly])
    assert prefetch_twins.main(["--table", str(path), "--out", str(path)]) == 0
    assert prefetch_twins.main(["--table", str(path), "--out", str(path), "--cap-kb", "64"]) == 0
    table = read_table(path)
    assert table["meta"]["l2_prefetch_twins"]["moved"] == {"col": 1, "col:cap64k": 1}
    first, second = (KernelConfig.from_dict(e["graph"]["config"]) for e in table["entries"])
    assert first == twin_of(PP64) and second == twin_of(COOP128, kb=64)  # 2 k-tiles of 32 KB: within 100 KB
    assert second.name == COOP128.name + "_l2pf64k"
