"""Per-GPU overlays (tuner/gpu_overlays.py): rebuilt from their runs byte for byte, laid over the tables on their own
card only, never over an entry retuned since the run that made them."""
from __future__ import annotations

import copy
import json
import logging

import pytest

from kernels import tuned_tables
from kernels.tuned_tables import gpu_overlay_dir, gpu_slug, load_default_tables, load_tables, table_variants
from tuner import gpu_overlays
from tuner.results import read_json

H100 = "NVIDIA H100 80GB HBM3"
RUNS = gpu_overlays.OVERLAYS[H100]["f32"]
GRIDS = [run for run in RUNS if not isinstance(run, gpu_overlays.ABRevert)]   # grids (perhaps Rechecked) and sweeps
ABS = [(acc, run) for acc in ("f32", "f16") for run in gpu_overlays.OVERLAYS[H100][acc]
       if isinstance(run, gpu_overlays.ABRevert)]   # (accumulator, A/B) among the card's runs of each table


def committed(acc: str) -> dict:
    return read_json(tuned_tables.TABLES_DIR / f"sm90_{acc}.json")


def committed_f32() -> dict:
    return committed("f32")


def key(entry: dict) -> tuple:
    return entry["m"], entry["n"], entry["k"], entry["b_layout"]


def test_committed_overlays_rebuild_byte_for_byte():
    # an overlay edited by hand, a run's record moved or a table change that moves an overlay fails here
    assert gpu_overlays.main(["--check"]) == 0


def test_gpu_slug():
    assert gpu_slug(H100) == "nvidia-h100-80gb-hbm3"
    assert gpu_slug("NVIDIA H100 PCIe") == "nvidia-h100-pcie"
    assert gpu_slug("  NVIDIA   A100-SXM4-80GB ") == "nvidia-a100-sxm4-80gb"
    with pytest.raises(ValueError):
        gpu_slug(" / ")


def test_overlay_holds_only_what_its_runs_changed_and_each_change_beats_the_table_choice():
    data = gpu_overlays.build(H100, "f32", RUNS, committed_f32())
    base = {key(e): e for e in committed_f32()["entries"]}
    assert data["entries"], "the H100 grids changed entries"
    runs = [gpu_overlays.load_run(H100, "f32", spec)[1] for spec in GRIDS]   # a recheck's medians, as build reads
    choice = gpu_overlays.confirm.choice
    reverts = [_ab_verdicts(ab, acc) for acc, ab in ABS if acc == "f32"]

    def justified(entry: dict, run) -> str | None:
        """How one run of the entry's layout justifies its new graph choice, by that run's own figures."""
        measured = run.results.get(f"{entry['m']}_{entry['n']}_{entry['k']}")
        if run.b_layout != entry["b_layout"] or not measured:
            return None
        us = entry.get("graph", entry)["us"]
        # a graph pick that is the eager arm leaves one arm with the eager's recorded time (confirm.with_picks):
        # the run's own time of that arm, timed as ours:<kernel>@<knobs>, counts too
        arm = f"ours:{choice(entry, 'graph')['kernel']}"
        us = min([us, *(c["kernel_us"] for name, c in measured.items()
                        if name.split("@")[0] == arm and c.get("ok") and c.get("kernel_us"))])
        if us <= gpu_overlays.confirm.MARGIN * measured["ours"]["kernel_us"] * 1.0001:
            return "faster"   # the arm ran in <= 97% of the table choice's time on the H100
        cublas = measured.get(f"cuBLAS-{gpu_overlays.confirm.LAYOUT_SUFFIX[run.b_layout]}")
        if cublas is None:   # a grid against another baseline (session 54's: cuBLASLt autotuning only)
            return None
        was = {choice(run.table[key(entry)], "graph")["kernel"], choice(base[key(entry)], "graph")["kernel"]}
        ran = measured["ours"]["info"]["graph_kernel"]
        if was == {"cublaslt"} and ran == "cublas" == choice(entry, "graph")["kernel"] and us == cublas["kernel_us"]:
            return "ran_cublas"   # a cuBLASLt algorithm the H100's list lacks: the cuBLAS arm that ran instead
        return None

    how = []
    for entry in data["entries"]:
        assert entry != base[key(entry)]
        if choice(entry, "graph") != choice(base[key(entry)], "graph"):
            reasons = {justified(entry, run) for run in runs} - {None}
            reasons |= {"reverted" for slower, was, _ in reverts   # an A/B's base choice, faster in both roles
                        if key(entry) in slower and choice(entry, "graph") == choice(was[key(entry)], "graph")}
            assert reasons, entry
            how.append(reasons)
    rounds = data["meta"]["confirmed"]
    assert 0 < sum(min(r) == "ran_cublas" for r in how) <= sum(r.get("ran_cublas", 0) for r in rounds)
    assert 0 < sum("reverted" in r for r in how) <= sum(r["graph"] for r in rounds if "ab" in r)
    assert sum(r["graph"] + r["eager"] + r.get("ran_cublas", 0) for r in rounds) >= len(data["entries"])
    assert data["meta"]["gpu"] == H100 and data["meta"]["overlay_of"]["gpu"] == committed_f32()["meta"]["gpu"]


def _ab_verdicts(ab: gpu_overlays.ABRevert, acc: str) -> tuple[set, dict, dict]:
    """The keys an overlay A/B measured its base faster on in both roles (kernel-only), and its base and candidate
    tables by key."""
    files = gpu_overlays.ab_revert.ab_files(ab.folder, acc, ab.layouts)
    slower = set()
    for pair, layout in zip(files["ab"], ab.layouts):
        role_a, role_b = (read_json(gpu_overlays.REPO / path) for path in pair.split(","))
        slower |= {(*map(int, mnk.split("_")), layout) for mnk in gpu_overlays.ab_revert.base_faster(role_a, role_b)}
    tables = [{key(e): e for e in read_json(gpu_overlays.REPO / files[name])["entries"]}
              for name in ("base", "candidate")]
    return slower, *tables


# each A/B among the H100's runs of a table -> its record in that overlay's meta ("graph": the entries it puts back)
AB_RECORDS = {
    # session 50's f16 half: the 5 f16 col entries session 49's grid changed held in both roles
    ("f16", f"{gpu_overlays.S50}/call1"):
        {"ab": "h100-2026-12-06-s50/call1", "b_layout": "col", "graph": 0, "eager": 0},
    # session 50's: two f32 col entries whose committed choice changed (late round 3 on the H200), so that the card's
    # runs no longer corrected them, ran slower than the overlay's old choice in both roles
    ("f32", f"{gpu_overlays.S50}/call1"):
        {"ab": "h100-2026-12-06-s50/call1", "b_layout": "col", "graph": 2, "eager": 0},
    # session 54's: of the 62 entries its grids against cuBLASLt autotuning changed, one col entry's new cuBLASLt
    # algorithm ran slower than the cuBLAS it replaced in both roles
    ("f32", f"{gpu_overlays.S54}/call5"):
        {"ab": "h100-2026-12-06-s54/call5", "b_layout": "col,row", "graph": 1, "eager": 0},
    # session 57's: the 17 f32 entries session 55's grid and floor-recheck fix changed; none ran slower in both roles
    ("f32", f"{gpu_overlays.S57}/call1"):
        {"ab": "h100-2026-12-07-s57/call1", "b_layout": "col,row", "graph": 0, "eager": 0},
    # session 58's: the 9 f32 row entries session 57's grid and floor recheck changed; none ran slower in both roles
    ("f32", f"{gpu_overlays.S58}/call1"):
        {"ab": "h100-2026-12-07-s58/call1", "b_layout": "row", "graph": 0, "eager": 0},
    # session 59's: the 7 f16 col entries session 58's grid and floor recheck changed; none ran slower in both roles
    ("f16", f"{gpu_overlays.S59}/call1"):
        {"ab": "h100-2026-12-07-s59/call1", "b_layout": "col", "graph": 0, "eager": 0},
    # session 60's: the 10 f16 row entries session 59's grid and floor recheck changed; none ran slower in both roles
    ("f16", f"{gpu_overlays.S60}/call1"):
        {"ab": "h100-2026-12-07-s60/call1", "b_layout": "row", "graph": 0, "eager": 0},
    # session 60's: the 30 f32 col entries its own f32 col grid and floor recheck changed (calls 2-3)
    ("f32", f"{gpu_overlays.S60}/call5"):
        {"ab": "h100-2026-12-07-s60/call5", "b_layout": "col", "graph": 0, "eager": 0},
    # session 62's: the 27 f32 row entries its resumed f32 row grid and floor recheck changed (calls 1-2)
    ("f32", f"{gpu_overlays.S62}/call4"):
        {"ab": "h100-2026-12-07-s62/call4", "b_layout": "row", "graph": 0, "eager": 0},
    # session 65's: the 3 f16 row entries session 64-65's grid and its floor recheck changed; none ran slower in
    # both roles
    ("f16", f"{gpu_overlays.S65}/call3"):
        {"ab": "h100-2026-12-07-s65/call3", "b_layout": "row", "graph": 0, "eager": 0},
}


def test_the_h100_runs_hold_the_known_abs():
    assert sorted((acc, ab.folder) for acc, ab in ABS) == sorted(AB_RECORDS)


@pytest.mark.parametrize("acc, ab", ABS, ids=lambda x: x if isinstance(x, str) else x.folder.split("/", 1)[1])
def test_an_ab_of_the_cards_tables_puts_back_the_base_choice_where_it_ran_faster_in_both_roles(acc, ab):
    choice = gpu_overlays.confirm.choice
    runs, record = gpu_overlays.OVERLAYS[H100][acc], AB_RECORDS[acc, ab.folder]
    slower, was, measured = _ab_verdicts(ab, acc)
    assert len(slower) == record["graph"]
    data = gpu_overlays.build(H100, acc, runs, committed(acc))
    without = gpu_overlays.build(H100, acc, tuple(run for run in runs if run != ab), committed(acc))
    base = {key(e): e for e in committed(acc)["entries"]}
    now = base | {key(e): e for e in data["entries"]}
    before = base | {key(e): e for e in without["entries"]}
    for k in slower:
        assert choice(before[k], "graph") == choice(measured[k], "graph") != choice(was[k], "graph")
        assert choice(now[k], "graph") == choice(was[k], "graph")
        assert choice(now[k], "eager") == choice(before[k], "eager")
    # every other entry the A/B measured keeps what the runs give it
    measured_keys = {k for k in measured if measured[k] != was.get(k)}
    assert measured_keys - slower
    assert all(now[k] == before[k] for k in measured_keys - slower)
    assert [r for r in data["meta"]["confirmed"] if r.get("ab") == record["ab"]] == [record]
    with pytest.raises(ValueError, match="an A/B of .*not of 'NVIDIA H200'"):   # its runs name the card
        ab.apply(committed(acc)["entries"], "NVIDIA H200", acc, gpu_overlays.REPO, gpu_overlays.confirm.MARGIN)


def test_an_entry_retuned_since_the_run_is_left_alone():
    data = gpu_overlays.build(H100, "f32", RUNS, committed_f32())
    retuned = data["entries"][0]
    base = committed_f32()
    for entry in base["entries"]:
        if key(entry) == key(retuned):   # both roles retuned to cuBLASLt's first rank
            entry.pop("graph", None)
            entry.update(kernel="cublaslt", config={"kind": "lt_algo", "algo_index": 0},
                         runtime={"raster": 0, "swizzle": 0, "splits": 0}, us=1.0)
    again = gpu_overlays.build(H100, "f32", RUNS, base)
    assert key(retuned) not in {key(e) for e in again["entries"]}
    assert len(again["entries"]) == len(data["entries"]) - 1
    changed = [sum(r.get("changed_since_benchmark", 0) for r in d["meta"]["confirmed"]) for d in (data, again)]
    assert changed[1] > changed[0]


def test_runs_of_another_card_are_refused():
    with pytest.raises(ValueError, match="not of 'NVIDIA H200'"):
        gpu_overlays.build("NVIDIA H200", "f32", RUNS, committed_f32())


def _tables_dir(tmp_path, overlay_entries: list[dict]):
    """A tables directory: the committed f32 table and an H100 overlay of `overlay_entries`."""
    base = committed_f32()
    (tmp_path / "sm90_f32.json").write_text(json.dumps(base))
    meta = dict(base["meta"], gpu=H100)
    path = gpu_overlay_dir(H100, tmp_path) / "sm90_f32.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"meta": meta, "entries": overlay_entries}))
    return base


def test_the_overlay_is_laid_over_the_tables_on_its_card_only(tmp_path, monkeypatch, caplog):
    data = gpu_overlays.build(H100, "f32", RUNS, committed_f32())
    base = _tables_dir(tmp_path, data["entries"])
    monkeypatch.setattr("kernels.tuned_tables.TABLES_DIR", tmp_path)
    monkeypatch.delenv("HGEMM_EXTRA_TABLES", raising=False)
    changed = next(e for e in data["entries"] if "graph" in e)   # a graph choice apart from the eager one
    shape = key(changed)
    on_h100 = load_default_tables("sm90", gpu=H100)["f32"]
    on_h200 = load_default_tables("sm90", gpu=base["meta"]["gpu"])["f32"]
    assert len(on_h100) == len(on_h200) == len(base["entries"])
    assert on_h100.lookup(*shape).graph != on_h200.lookup(*shape).graph
    assert on_h100.lookup(*shape).graph.kernel == changed["graph"]["kernel"]
    assert on_h100.meta["overlays"] == [str(gpu_overlay_dir(H100, tmp_path) / "sm90_f32.json")]
    # a third card has no overlay: the tables load as they are, with a warning that they were measured elsewhere
    with caplog.at_level(logging.WARNING, logger="kernels.tuned_tables"):
        on_other = load_default_tables("sm90", gpu="NVIDIA H100 PCIe")["f32"]
    assert on_other.lookup(*shape).graph == on_h200.lookup(*shape).graph
    assert "NVIDIA H100 PCIe" in caplog.text and "no overlay" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kernels.tuned_tables"):
        load_default_tables("sm90", gpu=H100)
        load_default_tables("sm90", gpu=base["meta"]["gpu"])
    assert "no overlay" not in caplog.text


def test_a_deployments_extra_tables_still_win_over_the_cards_overlay(tmp_path, monkeypatch):
    data = gpu_overlays.build(H100, "f32", RUNS, committed_f32())
    committed = tmp_path / "committed"
    committed.mkdir()
    base = _tables_dir(committed, data["entries"])
    changed = data["entries"][0]
    mine = dict(copy.deepcopy(changed), kernel="cublas", config={"kind": "gemmex_tn"},
                runtime={"raster": 0, "swizzle": 0, "splits": 0})
    mine.pop("graph", None)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "sm90_f32.json").write_text(json.dumps({"meta": base["meta"], "entries": [mine]}))
    monkeypatch.setattr("kernels.tuned_tables.TABLES_DIR", committed)
    monkeypatch.setenv("HGEMM_EXTRA_TABLES", str(extra))
    entry = load_default_tables("sm90", gpu=H100)["f32"].lookup(*key(changed))
    assert entry.kernel == "cublas" and entry.graph is None


def test_the_variants_an_overlay_names_are_built_with_the_tables(tmp_path):
    base = committed_f32()
    variant = next(e for e in base["entries"] if e["kernel"] not in tuned_tables.ARM_KERNELS)
    (tmp_path / "sm90_f32.json").write_text(json.dumps(dict(base, entries=[])))
    path = gpu_overlay_dir(H100, tmp_path) / "sm90_f32.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"meta": dict(base["meta"], gpu=H100), "entries": [variant]}))
    assert load_tables("sm90", tmp_path)["f32"].variants() == []
    names = [c.name for c in table_variants(tmp_path)]
    assert variant["kernel"] in names
    assert names == [c.name for c in load_tables("sm90", path.parent)["f32"].variants()]


def test_merged_is_what_the_dispatcher_runs_on_that_card(tmp_path, monkeypatch):
    monkeypatch.delenv("HGEMM_EXTRA_TABLES", raising=False)
    assert gpu_overlays.main(["--merged", str(tmp_path / "h100"), "--gpu", H100]) == 0
    assert gpu_overlays.main(["--merged", str(tmp_path / "h200"), "--gpu", "NVIDIA H200"]) == 0
    # no overlay: the committed table, byte for byte
    assert (tmp_path / "h200" / "sm90_f32.json").read_text() == (tuned_tables.TABLES_DIR / "sm90_f32.json").read_text()
    merged = load_tables("sm90", tmp_path / "h100")["f32"]
    served = load_default_tables("sm90", gpu=H100)["f32"]
    assert merged.entries == served.entries
    overlay = read_json(gpu_overlays.overlay_path(H100, "f32"))["entries"]
    assert overlay and all(merged.lookup(*key(e)).graph == served.lookup(*key(e)).graph for e in overlay)
    assert merged.entries != load_tables("sm90")["f32"].entries


@pytest.mark.gpu
def test_gpu_the_default_dispatcher_runs_this_cards_overlay_and_it_computes_correctly(monkeypatch):
    # on the card itself: Dispatcher.default() names it and lays its overlay (if it has one) over the tables; an
    # overlay shape's graph choice is the overlay's, and a captured call of it replays to the right product
    import torch

    from kernels.dispatch import Dispatcher

    monkeypatch.delenv("HGEMM_EXTRA_TABLES", raising=False)
    d = Dispatcher.default()
    assert d.gpu == torch.cuda.get_device_name()
    path = gpu_overlays.overlay_path(d.gpu, "f32")
    if not path.is_file():
        assert "overlays" not in d.tables["f32"].meta
        assert d.tables["f32"].entries == load_tables("sm90")["f32"].entries
        return
    assert d.tables["f32"].meta["overlays"] == [str(path)]
    overlay = read_json(path)["entries"]
    own = load_tables("sm90", path.parent)["f32"]
    assert all(d.tables["f32"].lookup(*key(e)) == own.lookup(*key(e)) for e in overlay)
    e = min(overlay, key=lambda e: e["m"] * e["n"] * e["k"])  # the smallest: seconds, not minutes, of fp64
    m, n, k, layout = key(e)
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16)
    b = torch.randn(*((n, k) if layout == "col" else (k, n)), generator=g, device="cuda", dtype=torch.float16)
    ref = a.double() @ (b.double().t() if layout == "col" else b.double())
    for _ in range(2):  # warm-up off the capture stream, then capture
        d.run(a, b, layout, "f32")
    torch.cuda.synchronize()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        _, sel = d.run(a, b, layout, "f32", out=out)
    graph.replay()
    torch.cuda.synchronize()
    assert sel.fallback is None and sel.kernel == (e.get("graph") or e)["kernel"]
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-3


def test_a_cublaslt_choice_the_card_could_not_run_becomes_the_cublas_arm_that_ran():
    lt = {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 3, "algo": {"id": 66}},
          "runtime": {"raster": 0, "swizzle": 0, "splits": 0}}
    def entry(m, **arm):
        return {"m": m, "n": 64, "k": 64, "b_layout": "col", **(arm or lt), "us": 5.0, "cublas_us": 6.0}
    missing, present, retuned, sm90 = entry(1), entry(2), entry(3), entry(4, kernel="sm90_x", config={}, runtime={})
    def result(kernel, fallback, graph_kernel):
        return {"ours": {"ok": True, "kernel_us": 6.0, "info": {"kernel": kernel, "fallback": fallback,
                                                                 "graph_kernel": graph_kernel}},
                "cuBLAS-tn": {"ok": True, "kernel_us": 5.9}}
    run = gpu_overlays.confirm.Run(
        "f32", {"1_64_64": result("cublas", "tuned_elsewhere", "cublas"), "2_64_64": result("cublaslt", None, "cublaslt"),
                "3_64_64": result("cublas", "kernel_error", "cublas"), "4_64_64": result("sm90_x", None, "cublas")},
        {key(e): e for e in (missing, present, retuned, sm90)}, "col")
    retuned_now = dict(retuned, config={"kind": "lt_algo", "algo_index": 0})   # retuned since the run: left alone
    out, changed = gpu_overlays.ran_instead([missing, present, retuned_now, sm90], run)
    assert changed == 2   # both roles of the first entry (its graph choice is its eager one)
    assert out[1:] == [present, retuned_now, sm90]
    assert out[0] == {"m": 1, "n": 64, "k": 64, "b_layout": "col", "kernel": "cublas",
                      "config": {"kind": "gemmex_tn"}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0},
                      "us": 5.9, "cublas_us": 6.0}


def test_an_f16_overlay_takes_the_cards_f32_arms_for_graphs_only():
    by_acc = gpu_overlays.OVERLAYS[H100]
    base = read_json(tuned_tables.TABLES_DIR / "sm90_f16.json")
    alone = gpu_overlays.build(H100, "f16", by_acc["f16"], base)
    data = gpu_overlays.build(H100, "f16", by_acc["f16"], base, f32_runs=gpu_overlays.F16_HELPERS[H100])
    before = {key(e): e for e in base["entries"]}
    took_f32 = 0
    for entry in data["entries"]:
        old = before[key(entry)]
        # per call, another run's figures are too noisy for the 3% margin: an eager choice takes an f32 run's arm
        # only where it is the cuBLAS arm that ran in place of a cuBLASLt algorithm the card lacks (the fallback
        # accumulates in fp32); the f16 runs' own arms may win per call (session 42's col grid: 16384×16384×512)
        if (gpu_overlays.confirm.choice(entry, "eager") != gpu_overlays.confirm.choice(old, "eager")
                and entry.get("acc") == "f32"):
            assert (old["kernel"], entry["kernel"]) == ("cublaslt", "cublas")
        took_f32 += entry.get("graph", entry).get("acc") == "f32" != old.get("graph", old).get("acc")
    assert took_f32 and len(data["entries"]) > len(alone["entries"])
    worst = next(e for e in data["entries"] if key(e) == (1024, 1024, 16384, "row"))   # 0.70x of torch.matmul there
    assert (worst["graph"]["kernel"], worst["graph"]["acc"]) == ("cublas", "f32")


def test_an_f16_sweep_corrects_with_its_own_arms_only(monkeypatch):
    # session 48: the split-K sweeps' f16 runs, given the f32 helpers, flipped small entries to f32 kernels near the
    # margin (0.996x in the A/B); without them every change a sweep makes is one of its own f16 arms or baselines
    runs = gpu_overlays.OVERLAYS[H100]["f16"]
    base = read_json(tuned_tables.TABLES_DIR / "sm90_f16.json")
    sweeps = [i for i, run in enumerate(runs)
              if isinstance(run, tuple) and run[0] in gpu_overlays.SWEEPS]
    assert len(sweeps) >= 2 and min(sweeps) > 0

    def sweep_changes() -> list[tuple[dict, dict]]:
        """What each sweep alone changes (the grids between them may take f32 arms)."""
        out = []
        for i in sweeps:
            before, after = (gpu_overlays.build(H100, "f16", runs[:end], base, f32_runs=gpu_overlays.F16_HELPERS[H100])
                             for end in (i, i + 1))
            was = {key(e): e for e in base["entries"]} | {key(e): e for e in before["entries"]}
            out += [(was[key(e)], e) for e in after["entries"] if was.get(key(e)) != e]
        return out

    changes = sweep_changes()
    assert changes
    for old, new in changes:
        assert new.get("graph", new).get("acc", "f16") == "f16", new
    monkeypatch.setattr(gpu_overlays, "SWEEPS", frozenset())
    assert any(new.get("graph", new).get("acc") == "f32" for _, new in sweep_changes())


def test_in_an_f16_overlay_the_cublas_arm_that_ran_accumulates_in_fp32_at_the_f32_runs_time():
    # the dispatcher's fallback runs an f16 request with fp32 accumulation; its time is the f32 run's cuBLAS
    # baseline put on the f16 run's scale through torch.matmul (10 / 8 here)
    lt = {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 3, "algo": {"id": 66}},
          "runtime": {"raster": 0, "swizzle": 0, "splits": 0}}
    entry = {"m": 64, "n": 64, "k": 64, "b_layout": "col", **lt, "us": 5.0, "cublas_us": 6.0}
    f16 = gpu_overlays.confirm.Run(
        "f16", {"64_64_64": {"ours": {"ok": True, "kernel_us": 9.1, "info": {"kernel": "cublas",
                                                                          "fallback": "kernel_error",
                                                                          "graph_kernel": "cublas"}},
                             "torch.matmul": {"ok": True, "kernel_us": 10.0},
                             "cuBLAS-tn": {"ok": True, "kernel_us": 11.5}}},   # fp16 accumulation: not what ran
        {key(entry): entry}, "col")
    f32 = gpu_overlays.confirm.Run(
        "f32", {"64_64_64": {"torch.matmul": {"ok": True, "kernel_us": 8.0},
                             "cuBLAS-tn": {"ok": True, "kernel_us": 7.2}}}, {}, "col")
    out, changed = gpu_overlays.ran_instead([entry], f16, f32)
    assert changed == 2
    assert {k: out[0][k] for k in ("kernel", "config", "acc")} == {"kernel": "cublas", "config": {"kind": "gemmex_tn"},
                                                                   "acc": "f32"}
    assert out[0]["us"] == pytest.approx(9.0)
    assert gpu_overlays.ran_instead([entry], f16) == ([entry], 0)   # no f32 run: it keeps falling back


def test_a_rechecked_grid_corrects_by_each_shapes_median_not_its_one_draw():
    # session 51's f32 row grid on the H100 timed two 8192-scale shapes 4% slower than cuBLAS NN in one draw; its
    # floor recheck timed them 2-3% faster in three more runs, and 2048x64x4096 below cuBLAS NN in every run
    i, spec = next((i, run) for i, run in enumerate(RUNS) if isinstance(run, gpu_overlays.Rechecked))   # the first
    choice = gpu_overlays.confirm.choice
    runs = RUNS[:i + 1]
    read = gpu_overlays.build(H100, "f32", runs, committed_f32())
    one_draw = gpu_overlays.build(H100, "f32", (*runs[:i], spec.grid), committed_f32())
    before = gpu_overlays.build(H100, "f32", runs[:i], committed_f32())
    base = {key(e): e for e in committed_f32()["entries"]}
    was = base | {key(e): e for e in before["entries"]}

    def changed(data: dict) -> set:
        now = base | {key(e): e for e in data["entries"]}
        return {k for k in now if choice(now[k], "graph") != choice(was[k], "graph")}

    assert changed(read) == {(2048, 64, 4096, "row")}
    assert read["meta"]["confirmed"][-1]["rechecked"] == spec.folder    # the overlay records what it read
    assert changed(one_draw) >= {(2048, 64, 4096, "row"), (8192, 8192, 16384, "row"), (8192, 16384, 12288, "row")}
    with pytest.raises(ValueError, match="no floor recheck rounds"):
        gpu_overlays.Rechecked(spec.grid, f"{spec.folder}/nothing_here").rounds(gpu_overlays.REPO)


def test_a_recheck_run_at_a_later_commit_is_read_only_if_it_ran_the_grids_table():
    # session 65's recheck ran at cb31d74, the grid at 2cc82d1 (no table changed between): the table the rounds ran
    # is filed beside them and compared with the grid's; the A/B's candidate table stands in for another table
    acc = "f16"
    runs = gpu_overlays.OVERLAYS[H100][acc]
    spec = next(run for run in runs if isinstance(run, gpu_overlays.Rechecked) and run.measured)
    _, run = gpu_overlays.load_run(H100, acc, spec)
    grid = gpu_overlays.confirm.Run.load(acc, gpu_overlays.REPO / spec.grid[0], gpu_overlays.REPO / spec.grid[1])
    mnk = spec.rounds(gpu_overlays.REPO)[0]["shapes"][0]["mnk"]
    assert run.results[mnk] != grid.results[mnk]      # the rounds' medians were read
    other = gpu_overlays.Rechecked(spec.grid, spec.folder, f"{gpu_overlays.S65}/call3/cand_tables/sm90_f16.json.gz")
    with pytest.raises(ValueError, match="other tables"):
        gpu_overlays.load_run(H100, acc, other)
    with pytest.raises(ValueError, match="commit"):       # without the table beside them, the commits must match
        gpu_overlays.load_run(H100, acc, gpu_overlays.Rechecked(spec.grid, spec.folder))
