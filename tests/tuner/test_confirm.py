"""tuner.confirm: table choices replaced by our own arms that the grid benchmark timed clearly faster."""
from __future__ import annotations

import gzip
import json

import pytest

from kernels.tuned_tables import TunedTable, load_tables
from tuner.confirm import Run, confirm, main

SM90 = {"family": "sm90", "acc": "f32", "b_layout": "col", "tile": [128, 128, 64], "cluster": [1, 1],
        "warp": [0, 0, 0], "stages": 0, "schedule": "pingpong", "scheduler": "persistent", "alignment": 8}
SM90_NAME = "sm90_f32_col_t128x128x64_c1x1_sauto_pp_pers_a8"
KNOBS = {"raster": 0, "swizzle": 0, "splits": 0}
CUBLAS = {"kernel": "cublas", "config": {"kind": "gemmex_tn"}, "runtime": KNOBS}


def sm90_entry(m=4096, n=4096, k=128, acc=None, **extra):
    config = dict(SM90, acc=acc or "f32")
    name = SM90_NAME.replace("f32", config["acc"])
    return {"m": m, "n": n, "k": k, "b_layout": "col", "kernel": name, "config": config,
            "runtime": {"raster": 2, "swizzle": 1, "splits": 0}, "us": 50.0, "cublas_us": 55.0, **extra}


def result(kernel_us, call_us, ok=True, **info):
    return {"ok": ok, "kernel_us": kernel_us, "call_us": call_us, "info": info}


def run(acc, entries, shapes):
    """shapes: mnk -> {competitor: result}"""
    return Run(acc, shapes, {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in entries})


def test_an_arm_faster_both_ways_replaces_the_entry_for_both_roles_with_its_kernel_time():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(90, 110)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert {k: new[k] for k in ("kernel", "config", "runtime")} == CUBLAS
    assert new["us"] == 90 and new["cublas_us"] == 55 and "graph" not in new and "acc" not in new
    assert counts["graph"] == counts["eager"] == 1


def test_faster_kernel_only_changes_the_graph_choice_and_keeps_the_eager_one():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(90, 119)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == SM90_NAME and new["us"] == 50
    assert new["graph"] == {**CUBLAS, "us": 90}
    assert (counts["graph"], counts["eager"]) == (1, 0)


def test_within_the_margin_or_failed_or_not_ours_nothing_changes():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(80, 90),  # torch is not an arm
                                "cuBLAS-tn": result(98, 117.5),                           # 2%: noise
                                "cuBLASLt-auto-tuning-tn": result(50, 60, ok=False, algo_index=3)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and counts["graph"] == counts["eager"] == 0


def test_the_tables_own_arm_timed_faster_as_a_baseline_is_spread_and_changes_nothing():
    # ours runs cuBLAS TN; the cuBLAS TN baseline, the same arm, ran 4% faster (session 46, H100 512x4096x4096)
    entry = dict(sm90_entry(), **CUBLAS)
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(96, 110)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and counts["graph"] == counts["eager"] == 0
    # ... and it stays the choice when it is also the fastest of several arms that beat the margin
    shapes["4096_4096_128"]["cuBLASLt-auto-tuning-tn"] = result(97, 200, algo_index=5, top_n=32)
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and counts["graph"] == 0


def test_the_autotuned_cublaslt_baseline_becomes_its_algorithm():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLASLt-auto-tuning-tn": result(80, 100, algo_index=5, top_n=32)}}
    (new,), _ = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == "cublaslt" and new["config"] == {"kind": "lt_algo", "algo_index": 5}


def test_the_autotuned_pick_carries_the_identity_its_run_recorded_and_loads_as_a_table():
    # runs since session 55 record the kept algorithm's identity: the entry runs that algorithm wherever a list
    # ranks it (kernels.dispatch), not whatever another card ranks 5th
    algo = {"algo_id": 31, "tile_id": 18, "stages_id": 20, "splitk_num": 1, "reduction_scheme": 0,
            "cta_swizzling": 0, "custom_option": 0, "cluster_shape_id": 2}
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLASLt-auto-tuning-tn": result(80, 100, algo_index=5, top_n=32, algo=algo)}}
    (new,), _ = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["config"] == {"kind": "lt_algo", "algo_index": 5, "algo": algo}
    meta = {"gpu": "NVIDIA H100 80GB HBM3", "arch": "sm90", "acc": "f32", "date": "2026-12-06", "commit": "x"}
    table = TunedTable.from_dict({"meta": meta, "entries": [new]})   # the table checker takes it as written
    assert table.lookup(4096, 4096, 128, "col").config["algo"] == algo


def test_a_cublaslt_choice_timed_again_with_its_identity_takes_it_and_keeps_its_time():
    algo = {"algo_id": 31, "tile_id": 18, "stages_id": 20, "splitk_num": 1, "reduction_scheme": 0,
            "cta_swizzling": 0, "custom_option": 0, "cluster_shape_id": 2}
    lt = {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 5}, "runtime": KNOBS}
    entry = dict(sm90_entry(), **lt)    # one choice for both roles, chosen before runs recorded identities
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLASLt-auto-tuning-tn": result(99, 119, algo_index=5, algo=algo)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == dict(entry, config={**lt["config"], "algo": algo})   # no "graph" split, "us" unchanged
    assert counts["stamped"] == 2 and counts["graph"] == counts["eager"] == 0
    # another index, or a choice that has an identity, is not stamped; nor is anything without one recorded
    for theirs in (dict(algo_index=6, algo=algo), dict(algo_index=5)):
        shapes["4096_4096_128"]["cuBLASLt-auto-tuning-tn"] = result(99, 119, **theirs)
        (same,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
        assert same == entry and "stamped" not in counts
    other = dict(algo, tile_id=19)
    shapes["4096_4096_128"]["cuBLASLt-auto-tuning-tn"] = result(99, 119, algo_index=5, algo=other)
    (same,), counts = confirm([new], "f32", [run("f32", [new], shapes)])
    assert same == new and "stamped" not in counts   # within the margin: the identity it has stands
    # only the role that runs it: a graph choice of cuBLASLt beside an eager sm90 kernel
    split = dict(sm90_entry(), graph=dict(lt, us=40.0))
    shapes["4096_4096_128"]["cuBLASLt-auto-tuning-tn"] = result(99, 200, algo_index=5, algo=algo)
    (new,), counts = confirm([split], "f32", [run("f32", [split], shapes)])
    assert new["graph"] == dict(lt, config={**lt["config"], "algo": algo}, us=40.0)
    assert new["kernel"] == SM90_NAME and counts["stamped"] == 1


def test_a_cublaslt_choice_takes_the_identity_ours_recorded_running_it():
    algo = {"algo_id": 66, "tile_id": 18, "stages_id": 35, "splitk_num": 2, "reduction_scheme": 2,
            "cta_swizzling": 0, "custom_option": 3, "cluster_shape_id": 5}
    lt = {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 3}, "runtime": KNOBS}
    entry = dict(sm90_entry(), **lt)    # one choice for both roles, chosen before runs recorded identities
    ran = {"algo_index": 3, "algo": algo}
    shapes = {"4096_4096_128": {"ours": result(100, 120, lt_algo=ran, graph_lt_algo=ran),
                                "torch.matmul": result(101, 121), "cuBLAS-tn": result(103, 125)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == dict(entry, config={**lt["config"], "algo": algo})   # no "graph" split, "us" unchanged
    assert counts["stamped"] == 2 and counts["graph"] == counts["eager"] == 0
    # a record of another index, a choice that has an identity, or an entry changed since: nothing stamped
    for info, table_entry, measured in ((dict(lt_algo=dict(ran, algo_index=4)), entry, entry),
                                        (dict(lt_algo=ran), new, new), (dict(lt_algo=ran), entry, sm90_entry()),
                                        ({}, entry, entry)):
        shapes["4096_4096_128"]["ours"] = result(100, 120, **info)
        (same,), counts = confirm([table_entry], "f32", [run("f32", [measured], shapes)])
        assert same == table_entry and "stamped" not in counts
    # only the role that ran it: a graph choice of cuBLASLt beside an eager sm90 kernel; a faster arm wins as ever
    split = dict(sm90_entry(), graph=dict(lt, us=40.0))
    shapes["4096_4096_128"]["ours"] = result(100, 120, graph_lt_algo=ran)
    (new,), counts = confirm([split], "f32", [run("f32", [split], shapes)])
    assert new["graph"] == dict(lt, config={**lt["config"], "algo": algo}, us=40.0)
    assert new["kernel"] == SM90_NAME and counts["stamped"] == 1
    shapes["4096_4096_128"]["cuBLAS-tn"] = result(90, 125)
    (new,), counts = confirm([split], "f32", [run("f32", [split], shapes)])
    assert new["graph"] == dict(CUBLAS, us=90) and "stamped" not in counts


def test_the_autotuner_records_the_identity_of_the_algorithm_it_kept(monkeypatch):
    import kernels.cublas as cublas
    from tuner import competitors

    algos = [cublas.LtAlgorithm(i, 30 + i, 10 + i, 20, 1, 0, 0, 0, 2, 0, 1.0) for i in range(3)]
    monkeypatch.setattr(cublas, "lt_algorithms", lambda *a, **k: algos)
    times = {0: 50.0, 1: None, 2: 40.0}   # algorithm 1 fails its check; 2 is the fastest
    kept = competitors.cublaslt_autotuned("cuBLASLt-auto-tuning-tn", "col", "f32", 256, 256, 256,
                                          lambda c: times[c.info["algo_index"]])
    assert kept.info["algo_index"] == 2 and kept.info["failed"] == [1] and kept.info["autotune_us"] == 40.0
    assert kept.info["algo"] == algos[2].identity() and kept.info["algo"]["algo_id"] == 32


def test_an_event_timed_kernel_figure_never_judges_a_graph_choice():
    # session 25: `ours` beside cuBLASLt autotuning timed by eager launches after a failed capture, its kernel-only
    # figure inflated by launch gaps; the per-call role is unaffected
    entry = sm90_entry()
    lt = result(80, 100, algo_index=5)
    shapes = {"4096_4096_128": {"ours": result(100, 120, kernel_method="events"), "torch.matmul": result(95, 118),
                                "cuBLASLt-auto-tuning-tn": lt}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == "cublaslt" and new["graph"]["kernel"] == SM90_NAME  # eager taken, graph choice kept
    assert (counts["graph"], counts["eager"], counts["event_timed"]) == (0, 1, 1)
    # an event-timed candidate is no graph choice either; a graph-timed pair is judged as always
    shapes = {"4096_4096_128": {"ours": result(100, 120, kernel_method="graph"), "torch.matmul": result(95, 118),
                                "cuBLASLt-auto-tuning-tn": dict(lt, info={"algo_index": 5, "kernel_method": "events"}),
                                "cuBLAS-tn": result(90, 119, kernel_method="graph")}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["graph"] == {**CUBLAS, "us": 90} and "event_timed" not in counts


def test_per_call_a_pick_must_not_be_slower_kernel_only():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(103, 100)}}   # faster per call, slower kernel: noise or host
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and counts["eager"] == 0


def test_f16_takes_an_f32_run_arm_on_the_scale_of_torch_matmul():
    f16 = sm90_entry(acc="f16")
    f32 = sm90_entry()
    own = run("f16", [f16], {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(90, 110),
                                               "cuBLAS-tn": result(130, 150)}})
    # the f32 run ran hotter: torch.matmul took twice as long there, so its ours (160 µs) counts as 72 µs here
    other = run("f32", [f32], {"4096_4096_128": {"ours": result(160, 200), "torch.matmul": result(200, 220),
                                                 "cuBLAS-tn": result(190, 215)}})
    (new,), counts = confirm([f16], "f16", [own, other])
    assert new["kernel"] == SM90_NAME and new["acc"] == "f32"
    assert new["us"] == pytest.approx(160 * 90 / 200)
    assert counts["graph"] == counts["eager"] == 1 and "graph" not in new


def test_an_entry_changed_since_the_benchmark_is_left_alone():
    measured = sm90_entry()
    now = dict(sm90_entry(), runtime={"raster": 1, "swizzle": 4, "splits": 0})  # another arm in both roles
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(50, 60)}}
    (new,), counts = confirm([now], "f32", [run("f32", [measured], shapes)])
    assert new == now and counts["changed_since_benchmark"] == 1
    # the same arms with another recorded time: what the run measured is still what the entry runs
    (new,), counts = confirm([sm90_entry(us=40.0)], "f32", [run("f32", [measured], shapes)])
    assert new["kernel"] == "cublas" and counts["changed_since_benchmark"] == 0


def test_a_role_whose_choice_changed_since_the_benchmark_is_left_alone_the_other_is_judged():
    measured = sm90_entry()
    eager_moved = {**sm90_entry(), **CUBLAS, "us": 55.0, "graph": {**{k: measured[k] for k in
                                                                       ("kernel", "config", "runtime")}, "us": 50.0}}
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(90, 110)}}
    (new,), counts = confirm([eager_moved], "f32", [run("f32", [measured], shapes)])
    # kernel-only the run timed the graph choice (the sm90 arm) against cuBLAS: corrected; per call it timed an sm90
    # eager choice the entry no longer has: its cuBLAS eager choice stays
    assert new["kernel"] == "cublas" and "graph" not in new and (counts["graph"], counts["eager"]) == (1, 0)


def test_runs_must_start_with_the_tables_own_accumulator():
    entry = sm90_entry()
    with pytest.raises(ValueError):
        confirm([entry], "f16", [run("f32", [entry], {})])
    with pytest.raises(ValueError):
        confirm([entry], "f32", [run("f32", [entry], {})], margin=1.2)


def test_cli_writes_a_table_the_dispatcher_loads(tmp_path):
    entries = [sm90_entry(), sm90_entry(m=64, n=64, k=64)]
    meta = {"arch": "sm90", "acc": "f32", "gpu": "H200", "date": "2026-12-01", "commit": "x", "driver": "580",
            "cuda": "13.0", "torch": "2.11"}
    table = {"meta": meta, "entries": entries}
    (tmp_path / "in.json").write_text(json.dumps(table))
    with gzip.open(tmp_path / "measured.json.gz", "wt") as f:
        json.dump(table, f)
    shapes = [{"mnk": "4096_4096_128", "competitors": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                                       "cuBLAS-tn": result(90, 119)}}]
    (tmp_path / "results.json").write_text(json.dumps({"meta": {"b_layout": "col"}, "shapes": shapes}))
    out = tmp_path / "out" / "sm90_f32.json"
    assert main(["--table", str(tmp_path / "in.json"), "--out", str(out),
                 "--run", f"f32={tmp_path / 'results.json'},{tmp_path / 'measured.json.gz'}"]) == 0
    written = json.loads(out.read_text())
    assert written["meta"]["confirmed"] == {"runs": ["f32"], "margin": 0.97, "graph": 1, "eager": 0,
                                            "changed_since_benchmark": 0, "not_benchmarked": 1,
                                            "borrowed_f32": 0, "graph_alternatives": 1}
    loaded = load_tables("sm90", out.parent)["f32"]
    assert loaded.lookup(4096, 4096, 128, "col").graph.kernel == "cublas"
    assert loaded.lookup(64, 64, 64, "col").kernel == SM90_NAME


def test_a_shape_without_its_reference_is_not_touched():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118, ok=False),
                                "cuBLAS-tn": result(50, 60)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and counts["not_benchmarked"] == 1


def test_a_row_run_corrects_only_row_entries_with_its_nn_arms():
    """A `--b_layout row` benchmark gives ours B row-major: its cuBLAS-nn / cuBLASLt-auto-tuning-nn baselines are
    the row entries' own arms (gemmex_nn, an lt_algo of the NN list); TN baselines there are not, and col entries of
    the same shape are not what that run measured."""
    row = sm90_entry(b_layout="row")
    col = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                "cuBLAS-tn": result(60, 70),  # B col-major: not an arm of a row entry
                                "cuBLAS-nn": result(90, 110)}}
    (new_row, new_col), counts = confirm([row, col], "f32", [Run("f32", shapes, {
        (e["m"], e["n"], e["k"], e["b_layout"]): e for e in (row, col)}, "row")])
    assert {k: new_row[k] for k in ("kernel", "config", "runtime")} == dict(CUBLAS, config={"kind": "gemmex_nn"})
    assert new_row["b_layout"] == "row" and new_col == col
    assert counts["graph"] == counts["eager"] == 1 and counts["not_benchmarked"] == 1
    lt = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                            "cuBLASLt-auto-tuning-nn": result(80, 100, algo_index=4)}}
    (picked,), _ = confirm([row], "f32", [Run("f32", lt, {(4096, 4096, 128, "row"): row}, "row")])
    assert picked["config"] == {"kind": "lt_algo", "algo_index": 4}
    with pytest.raises(ValueError, match="one B layout"):
        confirm([row], "f32", [Run("f32", lt, {}, "row"), Run("f32", lt, {}, "col")])


def test_an_fp32_accumulating_variant_an_f16_run_timed_enters_the_f16_table_marked_as_borrowed():
    """An f16 run times the fp32-accumulating variants it is given (an f16 table may run them): the arm keeps its
    accumulator in the entry ("acc": "f32"), as an arm of the f32 run does; an f16 variant gets no mark."""
    entry = sm90_entry(acc="f16")
    f32_variant = "sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8"
    for name, mark in ((f32_variant, "f32"), (f32_variant.replace("f32", "f16"), None)):
        shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                    f"ours:{name}": result(80, 100, kernel=name)}}
        (new,), counts = confirm([entry], "f16", [run("f16", [entry], shapes)])
        assert new["kernel"] == name and new.get("acc") == mark and counts["graph"] == 1


def test_a_variant_timed_beside_the_table_becomes_that_variant_with_the_knobs_it_ran(tmp_path):
    """eval_one_file.sh --also_variants V: competitor ours:V is an arm (a sweep of chosen variants over chosen
    shapes); one of the other layout, or not a variant, is not."""
    entry = sm90_entry()
    other = "sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8"
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                f"ours:{other}": result(80, 100, kernel=other, runtime={"swizzle": 2}),
                                "ours:sm90_f32_row_t64x128x64_c1x1_sauto_pp_pers_a8": result(60, 70),
                                "ours:no_such_variant": result(50, 60)}}
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == other and new["us"] == 80 and "graph" not in new
    assert new["config"] == dict(SM90, tile=[64, 128, 64])
    assert new["runtime"] == {"raster": 0, "swizzle": 2, "splits": 0}
    assert counts["graph"] == counts["eager"] == 1
    meta = {"arch": "sm90", "acc": "f32", "gpu": "H200", "date": "2026-12-02", "commit": "x", "driver": "580",
            "cuda": "13.0", "torch": "2.11"}
    (tmp_path / "sm90_f32.json").write_text(json.dumps({"meta": meta, "entries": [new]}))
    loaded = load_tables("sm90", tmp_path)["f32"].lookup(4096, 4096, 128, "col")
    assert loaded.kernel == other and loaded.runtime["swizzle"] == 2


def test_a_variant_timed_with_knobs_in_its_name_becomes_that_variant_with_those_knobs():
    """eval_one_file.sh --also_variants V@s2: competitor ours:V@s2 is the arm V with two K splits."""
    entry = sm90_entry()
    splitk = "splitk_f32_col_t128x128x64_s4_a8_pdl"
    shapes = {"4096_4096_128": {"ours": result(100, 120), "torch.matmul": result(95, 118),
                                f"ours:{splitk}@s2": result(80, 100, kernel=splitk, runtime={"splits": 2})}}
    (new,), _ = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == splitk and new["runtime"] == {"raster": 0, "swizzle": 0, "splits": 2}


def test_a_kernel_only_run_judges_the_graph_choices_and_leaves_the_eager_ones():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(100, None), "torch.matmul": result(95, None),
                                "cuBLAS-tn": result(90, None)}}  # eval_one_file.sh --timing kernel
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new["kernel"] == SM90_NAME and new["graph"] == {**CUBLAS, "us": 90}
    assert (counts["graph"], counts["eager"]) == (1, 0)


def test_a_call_only_run_changes_nothing_it_cannot_check_kernel_only():
    entry = sm90_entry()
    shapes = {"4096_4096_128": {"ours": result(None, 120), "torch.matmul": result(None, 118),
                                "cuBLAS-tn": result(None, 100)}}  # eval_one_file.sh --timing call
    (new,), counts = confirm([entry], "f32", [run("f32", [entry], shapes)])
    assert new == entry and (counts["graph"], counts["eager"]) == (0, 0)


def test_a_run_loaded_kernel_only_judges_graph_choices_only(tmp_path):
    # ACC:kernel on the command line: another run's per-call figures never judge an eager choice (session 40)
    f16 = sm90_entry(acc="f16")
    meta = {"arch": "sm90", "acc": "f16", "gpu": "H200", "date": "2026-12-05", "commit": "x", "driver": "580",
            "cuda": "13.0", "torch": "2.11"}
    (tmp_path / "in.json").write_text(json.dumps({"meta": meta, "entries": [f16]}))
    (tmp_path / "in32.json").write_text(json.dumps({"meta": dict(meta, acc="f32"), "entries": [sm90_entry()]}))
    own = [{"mnk": "4096_4096_128", "competitors": {"ours": result(100, 120), "torch.matmul": result(90, 110)}}]
    # in the f32 run its ours is 20% faster both ways, on torch.matmul's scale
    other = [{"mnk": "4096_4096_128", "competitors": {"ours": result(72, 88), "torch.matmul": result(90, 110)}}]
    for name, shapes in (("own.json", own), ("other.json", other)):
        (tmp_path / name).write_text(json.dumps({"meta": {"b_layout": "col"}, "shapes": shapes}))
    out = tmp_path / "out" / "sm90_f16.json"
    for mode, roles in (("f32", ("graph", "eager")), ("f32:kernel", ("graph",))):
        assert main(["--table", str(tmp_path / "in.json"), "--out", str(out),
                     "--run", f"f16={tmp_path / 'own.json'},{tmp_path / 'in.json'}",
                     "--run", f"{mode}={tmp_path / 'other.json'},{tmp_path / 'in32.json'}"]) == 0
        written = json.loads(out.read_text())
        record = written["meta"]["confirmed"]
        assert (record["runs"], record["graph"], record["eager"]) == (["f16", mode], 1, len(roles) - 1)
        (entry,) = written["entries"]
        assert (entry.get("acc") == "f32") == ("eager" in roles) and entry.get("graph", entry)["acc"] == "f32"
    with pytest.raises(SystemExit):
        main(["--table", str(tmp_path / "in.json"), "--out", str(out),
              "--run", f"f16:call={tmp_path / 'own.json'},{tmp_path / 'in.json'}"])
