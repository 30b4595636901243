"""CPU tests of tuner/ab_revert.py: an A/B's verdict sends a graph (kernel-only) or eager (per call) choice back only
when both roles agree."""
import pytest

from tuner.ab_revert import base_faster, revert

CUBLAS = {"kernel": "cublas", "config": {"kind": "gemmex_tn"}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0}}
SPLITK = {"kernel": "splitk_f32_col_t64x64x64_s4_a8_pdl", "config": {"family": "splitk"},
          "runtime": {"raster": 0, "swizzle": 0, "splits": 16}}
SM90 = {"kernel": "sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl", "config": {"family": "sm90"},
        "runtime": {"raster": 2, "swizzle": 8, "splits": 0}}


def entry(m, n, k, eager, graph=None, us=6.0, graph_us=5.0):
    e = {"m": m, "n": n, "k": k, "b_layout": "col", **eager, "us": us, "cublas_us": 6.0}
    if graph is not None:
        e["graph"] = {**graph, "us": graph_us}
    return e


def role(cand_first: bool, times: dict, calls: dict | None = None) -> dict:
    """A role's results: times = {mnk: (candidate µs, base µs)} kernel-only, calls the same per call (default 20 µs
    for both); role A has ours = candidate, role B ours = base."""
    shapes = []
    for mnk, (cand, base) in times.items():
        ours, other = (cand, base) if cand_first else (base, cand)
        cand_call, base_call = (calls or {}).get(mnk, (20.0, 20.0))
        ours_call, other_call = (cand_call, base_call) if cand_first else (base_call, cand_call)
        shapes.append({"mnk": mnk, "competitors": {
            "ours": {"ok": True, "kernel_us": ours, "call_us": ours_call},
            "ours[other]": {"ok": True, "kernel_us": other, "call_us": other_call},
            "torch.matmul": {"ok": True, "kernel_us": 6.0, "call_us": 30.0}}})
    return {"meta": {"acc": "f32", "b_layout": "col"}, "shapes": shapes}


def test_only_shapes_slower_in_both_roles_count():
    a = role(True, {"128_64_2048": (6.0, 5.6), "64_64_4096": (6.0, 5.6), "64_128_4096": (6.0, 5.98)})
    b = role(False, {"128_64_2048": (6.1, 5.7), "64_64_4096": (5.0, 5.6), "64_128_4096": (6.0, 5.5)})
    assert base_faster(a, b) == {"128_64_2048"}  # 64_64_4096: role B disagrees; 64_128_4096: role A within 3%
    assert base_faster(a, b, margin=1.0) == {"128_64_2048", "64_128_4096"}


def test_a_reverted_entry_takes_the_base_graph_choice_and_keeps_its_eager_one():
    base = {"entries": [entry(128, 64, 2048, SM90, CUBLAS, graph_us=5.7), entry(64, 64, 4096, SM90, CUBLAS)]}
    cand = {"entries": [entry(128, 64, 2048, SM90, SPLITK), entry(64, 64, 4096, SM90, SPLITK)]}
    runs = [(role(True, {"128_64_2048": (6.0, 5.6), "64_64_4096": (6.0, 5.6)}),
             role(False, {"128_64_2048": (6.0, 5.6), "64_64_4096": (6.0, 5.6)}))]
    # the second shape's entry changed since the A/B measured it: left as it is
    current = [entry(128, 64, 2048, SM90, SPLITK), entry(64, 64, 4096, SM90, SM90)]
    out, count = revert(current, "f32", base, cand, runs)
    assert count == {"graph": 1, "eager": 0}
    assert out[0]["kernel"] == SM90["kernel"] and out[0]["graph"]["kernel"] == "cublas"
    assert out[0]["graph"]["us"] == 5.7  # the base's tuned time comes back with its choice
    assert out[1] == current[1]


def test_a_reverted_graph_choice_equal_to_the_eager_one_is_folded_into_it():
    base = {"entries": [entry(128, 64, 2048, SM90)]}  # base: graph choice = eager choice (no "graph" key)
    cand = {"entries": [entry(128, 64, 2048, SM90, SPLITK)]}
    runs = [(role(True, {"128_64_2048": (6.0, 5.0)}), role(False, {"128_64_2048": (6.0, 5.0)}))]
    out, count = revert(cand["entries"], "f32", base, cand, runs)
    assert count == {"graph": 1, "eager": 0} and "graph" not in out[0] and out[0]["kernel"] == SM90["kernel"]


def test_an_eager_choice_goes_back_only_where_it_changed_and_both_roles_ran_it_slower_per_call():
    shapes = ("128_64_2048", "64_64_4096", "64_128_4096")
    base = {"entries": [entry(128, 64, 2048, SM90), entry(64, 64, 4096, SM90), entry(64, 128, 4096, CUBLAS)]}
    cand = {"entries": [entry(128, 64, 2048, SPLITK), entry(64, 64, 4096, SPLITK), entry(64, 128, 4096, CUBLAS)]}
    kernel = {mnk: (5.0, 5.0) for mnk in shapes}  # kernel-only: no verdict
    calls_a = {"128_64_2048": (24.0, 20.0), "64_64_4096": (24.0, 20.0), "64_128_4096": (24.0, 20.0)}
    calls_b = {"128_64_2048": (22.0, 20.0), "64_64_4096": (20.0, 20.0), "64_128_4096": (24.0, 20.0)}
    runs = [(role(True, kernel, calls_a), role(False, kernel, calls_b))]
    out, count = revert(cand["entries"], "f32", base, cand, runs)
    # 64_64_4096: role B within the margin (the dispatchers' offset); 64_128_4096: its eager choice did not change
    assert count == {"graph": 0, "eager": 1}
    assert out[0]["kernel"] == SM90["kernel"] and out[0]["graph"]["kernel"] == SPLITK["kernel"]  # graph kept
    assert out[0]["us"] == 6.0 and out[1:] == cand["entries"][1:]


def test_runs_of_another_accumulator_or_mixed_layouts_are_refused():
    cand = {"entries": [entry(128, 64, 2048, SM90, SPLITK)]}
    a, b = role(True, {}), role(False, {})
    b["meta"]["b_layout"] = "row"
    with pytest.raises(ValueError, match="one layout"):
        revert(cand["entries"], "f32", cand, cand, [(a, b)])
    with pytest.raises(ValueError, match="one layout"):
        revert(cand["entries"], "f16", cand, cand, [(role(True, {}), role(False, {}))])
