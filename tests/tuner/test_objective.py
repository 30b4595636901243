"""tuner.objective: the table's choice per shape by kernel time or by time per call (host cost per arm family), the
search's cheap-launch-first seeding, and tuner.retable rebuilding a table from records without a GPU."""
import gzip
import json

import pytest

from tuner.agent import Agent, AgentParams
from tuner.features import FeatureMap
from tuner.objective import HOST_US_H200, PDL_ALONE_MAX_EXTRA_US, Objective, lone_kernel_us, parse_host_us
from tuner.search import agent_search
from tuner.shapes import Shape
from tuner.synthetic import SyntheticEnv

HOST = {"sm80": 5.0, "sm90": 8.0, "cublas": 12.0, "cublaslt": 12.0}


def trial(family, us, cublas_us, config=None):
    arm = {"config": config or f"{family}_variant", "family": family, "algo": -1 if family != "cublaslt" else 0}
    return {"arm": arm, "us": us, "speedup": cublas_us / us if us else 0.0, "error": None}


def record(cublas_us, *trials):
    best = max(trials, key=lambda t: t["speedup"]) if trials else None
    return {"mnk": "64_4096_64", "cublas_us": cublas_us, "trials": list(trials), "best": best}


def test_kernel_objective_is_the_fastest_kernel_past_min_speedup():
    r = record(10.0, trial("cublaslt", 9.5, 10.0), trial("sm80", 10.2, 10.0))
    assert Objective().choose(r, 1.01)["arm"]["family"] == "cublaslt"
    assert Objective().choose(r, 1.10) is None  # not 10% faster: cuBLAS


def test_call_objective_takes_the_cheap_launch_within_the_kernel_floor():
    r = record(3.0, trial("cublaslt", 2.95, 3.0), trial("sm80", 3.03, 3.0), trial("sm90", 2.9, 3.0))
    chosen = Objective("call", HOST, 0.95).choose(r, 1.01)
    assert chosen["arm"]["family"] == "sm80"  # 3.03 + 5 beats 2.9 + 8 and 2.95 + 12
    # an sm80 kernel far slower than the fastest is out, however cheap its launch
    r = record(3.0, trial("sm90", 2.9, 3.0), trial("sm80", 3.5, 3.0))
    assert Objective("call", HOST, 0.95).choose(r, 1.01)["arm"]["family"] == "sm90"
    assert Objective("call", HOST, 0.80).choose(r, 1.01)["arm"]["family"] == "sm80"


def pdl(trial_):
    trial_["arm"] = dict(trial_["arm"], config=trial_["arm"]["config"] + "_pdl", pdl=True)
    return trial_


def test_call_objective_costs_a_pdl_trial_with_its_base_and_keeps_it_only_as_a_tie_break():
    # back to back the twin is fast (2.1), alone it is its base (3.4): sm80 (3.0 + 5) beats it (3.4 + 8) per call
    twin, base, sm80 = pdl(trial("sm90", 2.1, 3.0)), trial("sm90", 3.4, 3.0), trial("sm80", 3.0, 3.0)
    call = Objective("call", HOST, 0.8, lone_pdl=True)
    assert call.choose(record(3.0, twin, base, sm80), 1.01)["arm"]["family"] == "sm80"
    assert Objective().choose(record(3.0, twin, base, sm80), 1.01) is twin  # kernel objective: back-to-back time
    # without sm80, the twin and its base cost the same per call: the twin is kept (it overlaps in loops and graphs)
    assert call.choose(record(3.0, twin, base), 1.01) is twin
    # a twin whose base was never timed cannot be costed for a lone call
    assert call.choose(record(3.0, twin), 1.01) is None
    # the kernel floor compares lone times: a base 3.4 against cuBLAS's 3.0 is out at 0.97
    assert Objective("call", HOST, 0.97, lone_pdl=True).choose(record(3.0, twin, base), 1.01) is None
    # off (the default; the committed tables turn it on): the twin's back-to-back time counts, and it wins per call
    assert Objective("call", HOST, 0.8).choose(record(3.0, twin, base, sm80), 1.01) is twin


def test_a_pdl_trial_without_a_base_can_be_costed_as_a_multiple_of_its_back_to_back_time():
    # splitk variants exist only with PDL: 2.1 back to back, costed 1.5 x 2.1 = 3.15 alone, + 8 host beats cuBLAS's 3 + 12
    twin = pdl(trial("splitk", 2.1, 3.0))
    factor = Objective("call", HOST, 0.8, lone_pdl=True, pdl_alone_factor=1.5)
    assert factor.choose(record(3.0, twin), 1.01) is twin
    assert Objective("call", HOST, 0.8, lone_pdl=True).choose(record(3.0, twin), 1.01) is None  # off: left out
    # the factor is an estimate: a cheaper launch with a measured kernel still wins (3.0 + 5 < 3.15 + 8) ...
    assert factor.choose(record(3.0, twin, trial("sm80", 3.0, 3.0)), 1.01)["arm"]["family"] == "sm80"
    # ... and so does the kernel floor: at 3x the twin's lone estimate (6.3) is out against cuBLAS's 3.0
    assert Objective("call", HOST, 0.8, lone_pdl=True, pdl_alone_factor=3.0).choose(record(3.0, twin), 1.01) is None
    # a twin whose base was timed is costed with the base, never the factor
    base = trial("splitk", 4.0, 3.0, config="splitk_variant")
    assert factor.choose(record(3.0, twin, base), 1.01) is None  # 4.0 alone: out of the 0.8 floor against 3.0
    assert Objective.from_dict(factor.describe()) == factor
    for bad in (dict(lone_pdl=False, pdl_alone_factor=1.5), dict(lone_pdl=True, pdl_alone_factor=0.9)):
        with pytest.raises(ValueError):
            Objective("call", HOST, 0.8, **bad)


def test_the_pdl_alone_factor_adds_at_most_a_few_microseconds_to_a_longer_kernel():
    # what PDL hides is a launch gap and a prologue, not a share of the kernel: a 17 µs twin without a timed base is
    # costed 17 + 4 alone, not 1.6 x 17 = 27.2 (out of the 0.8 floor against cuBLAS's 18)
    host = {**HOST, "cublas": 20.0, "cublaslt": 20.0}
    twin = pdl(trial("sm90", 17.0, 18.0))
    objective = Objective("call", host, 0.8, lone_pdl=True, pdl_alone_factor=1.6)
    assert lone_kernel_us([twin], 1.6)(twin) == pytest.approx(17.0 + PDL_ALONE_MAX_EXTRA_US)
    short = pdl(trial("splitk", 3.0, 4.0))  # a short kernel: the factor, 1.6 x 3 = 4.8 < 3 + 4
    assert lone_kernel_us([short], 1.6)(short) == pytest.approx(4.8)
    assert objective.choose(record(18.0, twin), 1.01) is twin
    assert Objective("call", host, 0.8, lone_pdl=True).choose(record(18.0, twin), 1.01) is None  # no factor: left out


def test_mid_floor_takes_the_cheapest_call_among_close_kernels_past_the_host_bound_gate():
    # 40 µs kernels: past the gate (cuBLAS's host cost, 12 here) the default is the fastest kernel, cuBLAS's 40.0
    r = record(40.0, trial("sm90", 41.0, 40.0), trial("sm80", 45.0, 40.0))
    assert Objective("call", HOST, 0.8).choose(r, 1.01) is None
    mid = Objective("call", HOST, 0.8, mid_floor=0.97)
    assert mid.choose(r, 1.01)["arm"]["family"] == "sm90"   # 41 + 8 < 40 + 12; sm80's 45 is not within 3%
    assert Objective("call", HOST, 0.8, mid_floor=0.95).choose(r, 1.01)["arm"]["family"] == "sm90"
    # a long kernel: 3% is more than the host work saved, cuBLAS stays
    assert mid.choose(record(400.0, trial("sm90", 410.0, 400.0)), 1.01) is None
    # and a faster kernel of ours is taken as before
    assert mid.choose(record(40.0, trial("sm90", 38.0, 40.0)), 1.01)["arm"]["family"] == "sm90"
    assert Objective.from_dict(mid.describe()) == mid
    with pytest.raises(ValueError):
        Objective("call", HOST, 0.8, mid_floor=1.5)


def test_loop_guard_admits_a_slower_kernel_whose_cheaper_launch_wins_in_a_loop_too():
    # 64x128x128: cuBLAS's kernel 2.84, an sm80 variant 3.9 (1.37x slower: outside a 0.8 floor)
    r = record(2.84, trial("sm80", 3.9, 2.84))
    assert Objective("call", HOST, 0.8).choose(r, 1.01) is None
    guarded = Objective("call", HOST, 0.8, loop_guard=True)
    # per call 3.9 + 5 against 2.84 + 12; in a loop max(3.9, 5) against max(2.84, 12)
    assert guarded.choose(r, 1.01)["arm"]["family"] == "sm80"
    # a kernel longer than the fastest arm's loop time (cuBLAS's host work, 12) would slow a loop down: not taken,
    # however much a single call gains (11 + 5 < 2 + 12 is false anyway; 12.5 + 5 too)
    assert guarded.choose(record(2.0, trial("sm80", 12.5, 2.0)), 1.01) is None
    # the guard compares with the fastest arm, not with cuBLAS: an sm90 kernel of 7 (loop max(7, 8) = 8, call 15)
    # keeps an sm80 kernel of 9 out (loop 9), though it is cheaper per call (14) and beats cuBLAS's loop time of 12
    r = record(10.0, trial("sm90", 7.0, 10.0), trial("sm80", 9.0, 10.0))
    assert guarded.choose(r, 1.01)["arm"]["family"] == "sm90"
    assert Objective("call", HOST, 0.75).choose(r, 1.01)["arm"]["family"] == "sm80"  # a looser floor lets it in
    assert Objective.from_dict(guarded.describe()) == guarded != Objective("call", HOST, 0.8)


def test_call_objective_keeps_kernel_wins_of_arms_with_cublas_host_cost_and_falls_back_to_cublas():
    r = record(100.0, trial("cublaslt", 98.0, 100.0))  # 2% faster kernel, same host cost: still a win
    assert Objective("call", HOST).choose(r, 1.01)["arm"]["family"] == "cublaslt"
    r = record(100.0, trial("cublaslt", 99.9, 100.0))
    assert Objective("call", HOST).choose(r, 1.01) is None
    failed = {"arm": {"config": "x", "family": "sm80"}, "us": None, "speedup": 0.0, "error": "launch failed"}
    assert Objective("call", HOST).choose(record(5.0, failed), 1.01) is None


def test_call_objective_is_the_kernel_objective_once_kernels_outlast_the_host_work():
    # 100 µs kernels: back-to-back calls hide the launch cost, so a 3%-slower kernel with a cheap launch loses
    r = record(100.0, trial("cublaslt", 97.0, 100.0), trial("sm90", 99.5, 100.0))
    assert Objective("call", HOST, 0.95).choose(r, 1.01)["arm"]["family"] == "cublaslt"
    r = record(100.0, trial("sm90", 100.5, 100.0))
    assert Objective("call", HOST, 0.95).choose(r, 1.01) is None
    # the same kernels at 3 µs: the cheap launch wins
    r = record(3.0, trial("cublaslt", 2.91, 3.0), trial("sm90", 2.985, 3.0))
    assert Objective("call", HOST, 0.95).choose(r, 1.01)["arm"]["family"] == "sm90"


def test_host_costs_parse_and_round_trip():
    assert parse_host_us(None) == HOST_US_H200
    assert parse_host_us("sm80=4.5, cublas=10")["sm80"] == 4.5
    for bad in ("sm70=3", "sm80", "sm80=-1"):
        with pytest.raises(ValueError):
            parse_host_us(bad)
    with pytest.raises(ValueError):
        Objective("latency")
    o = Objective("call", HOST, 0.9)
    assert Objective.from_dict(o.describe()) == o and Objective.from_dict(None) == Objective()
    lone = Objective("call", HOST, 0.9, lone_pdl=True)
    assert Objective.from_dict(lone.describe()) == lone != o
    assert o.host_bound(5.0) and not o.host_bound(50.0) and not Objective().host_bound(5.0)


def test_search_measures_the_preferred_arms_first():
    env = SyntheticEnv(lt_count=4)
    agent = Agent(FeatureMap(env.arms), AgentParams(seed=0))
    run = agent_search(agent, env, Shape(64, 4096, 64), budget_trials=8, batch=4,
                       prefer=lambda arm: arm.family == "sm80", prefer_count=2)
    assert [t.arm.algo for t in run.trials[:3]] == [0, 1, 2]
    assert [t.arm.family for t in run.trials[3:5]] == ["sm80", "sm80"]


def test_arms_of_several_variant_sets_are_their_union_for_one_accumulator_and_layout():
    from tuner.arms import from_kernel_space

    one, _ = from_kernel_space("f16", "row", "splitk_cluster")
    other, _ = from_kernel_space("f16", "row", "splitk_cluster_wide")
    both, configs = from_kernel_space("f16", "row", "splitk_cluster,splitk_cluster_wide")
    assert both == one + other and len(both) == len(set(both)) > len(one) > 0
    assert {c.acc for c in configs.values()} == {"f16"} and {c.b_layout for c in configs.values()} == {"row"}


def test_retable_rebuilds_the_table_from_records(tmp_path):
    from tuner.arms import from_kernel_space
    from tuner.lt_arms import lt_arm
    from tuner.retable import main

    arms, _ = from_kernel_space("f32", "col", "default")
    variant = next(a for a in arms if a.family == "sm90")
    lt = lt_arm(0).to_dict()

    def real(t, arm):
        return {**t, "arm": arm}

    records = [dict(record(3.0, real(trial("cublaslt", 2.95, 3.0), lt), real(trial("sm90", 3.0, 3.0), variant.to_dict())),
                    mnk="64_4096_64"),
               dict(record(100.0, real(trial("cublaslt", 90.0, 100.0), lt)), mnk="4096_4096_4096")]
    state = tmp_path / "state"
    state.mkdir()
    with gzip.open(state / "finished_f32_col.jsonl.gz", "wt") as f:
        f.write("\n".join(json.dumps(r) for r in records) + "\n")
    out = tmp_path / "sm90_f32.json"
    assert main(["--state", str(state), "--out", str(out), "--objective", "call", "--host-us", "sm90=5"]) == 0
    table = json.loads(out.read_text())
    kernels = {(e["m"], e["k"]): e["kernel"] for e in table["entries"]}
    assert kernels == {(64, 64): variant.config, (4096, 4096): "cublaslt"}
    assert table["meta"]["tuner"]["objective"] == "call" and table["meta"]["tuner"]["host_us"]["sm90"] == 5.0
    assert main(["--state", str(state), "--out", str(out)]) == 0  # by kernel time: the faster cuBLASLt rank
    assert {(e["m"], e["k"]): e["kernel"] for e in json.loads(out.read_text())["entries"]}[(64, 64)] == "cublaslt"


def test_a_family_without_its_own_host_cost_is_charged_like_the_family_it_launches_like():
    objective = Objective("call", dict(HOST))
    assert objective.call_us(3.0, "splitk") == 3.0 + HOST["sm90"]
    assert objective.call_us(3.0, "unknown") == 3.0 + HOST["cublas"]
    assert Objective("call", {**HOST, "splitk": 6.0}).call_us(3.0, "splitk") == 9.0
