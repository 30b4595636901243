"""The search's leaders timed again beside cuBLAS before the table takes one (tuner/retime.py)."""
import math

import pytest

from tuner.agent import Agent
from tuner.arms import Arm
from tuner.features import FeatureMap
from tuner.jobs import tune_job
from tuner.objective import Objective
from tuner.retime import Retime, Retimed, apply, leaders, retime_leaders
from tuner.search import Trial
from tuner.shapes import Shape
from tuner.synthetic import SyntheticEnv, synthetic_arms

ARMS = synthetic_arms()
A, B, C = ARMS[0], ARMS[1], ARMS[2]


def _record(cublas_us, trials):
    ok = [t for t in trials if t[1]]
    best = min(ok, key=lambda t: t[1])
    return {"mnk": "12288_4096_256", "cublas_us": cublas_us, "seconds": 3.0,
            "best": {"arm": best[0].to_dict(), "us": best[1], "speedup": cublas_us / best[1]},
            "trials": [{"arm": arm.to_dict(), "us": us, "speedup": cublas_us / us if us else 0.0,
                        "error": None if us else "wrong"} for arm, us in trials]}


def test_leaders_are_the_fastest_distinct_arms_that_ran():
    trials = [Trial(A, 50.0, 1.0, 0.1), Trial(B, None, 0.0, 0.1, "wrong"), Trial(C, 40.0, 1.2, 0.1),
              Trial(A, 45.0, 1.1, 0.1)]
    assert leaders(trials, 2) == [C, A]
    assert leaders(trials, 5) == [C, A]
    assert leaders([Trial(B, None, 0.0, 0.1, "wrong")], 3) == []


def test_a_lucky_single_measurement_loses_the_entry_once_retimed():
    # the search timed the variant 4% under cuBLAS (a table entry); interleaved, it runs 16% over: cuBLAS stays
    record = _record(51.1, [(A, 49.0), (B, 53.0), (C, None)])
    assert Objective().choose(record, 1.01)["arm"] == A.to_dict()
    retimed = Retimed(49.0, {A: 57.0, B: 50.0}, 0.4, 5)
    apply(record, retimed)
    a, b, c = record["trials"]
    assert a["search_us"] == 49.0 and a["us"] == pytest.approx(57.0 * 51.1 / 49.0)   # on the search's scale
    assert a["speedup"] == pytest.approx(49.0 / 57.0)
    assert b["us"] == pytest.approx(50.0 * 51.1 / 49.0) and record["best"]["arm"] == B.to_dict()
    assert "search_us" not in c and c["error"] == "wrong"                            # not a leader: untouched
    assert Objective().choose(record, 1.01) is None                                  # the entry keeps cuBLAS
    assert record["seconds"] == pytest.approx(3.4) and record["retime"]["rounds"] == 5
    assert set(record["retime"]["arms"]) == {A.name, B.name}


def test_a_confirmed_leader_keeps_the_entry_and_a_failed_retiming_is_a_failed_trial():
    record = _record(60.0, [(A, 50.0), (B, 52.0)])
    apply(record, Retimed(61.0, {A: 50.5, B: None}, 0.2, 3, {B: "RuntimeError: launch failed"}))
    assert Objective().choose(record, 1.01)["arm"] == A.to_dict()
    assert record["trials"][1]["us"] is None and record["trials"][1]["speedup"] == 0.0
    assert record["trials"][1]["error"] == "retime: RuntimeError: launch failed"


def test_the_policy_retimes_only_long_shapes_and_round_trips_through_a_payload():
    assert not Retime().wanted(1e6)                                   # off by default
    policy = Retime(top=3, min_us=20.0, rounds=4)
    assert policy.wanted(20.0) and not policy.wanted(19.9)
    assert Retime.from_dict(policy.describe()) == policy and Retime().describe() == {}
    with pytest.raises(ValueError):
        Retime(top=2, rounds=0)
    env = SyntheticEnv()
    trials = [Trial(A, 10.0, 1.0, 0.1)]
    assert retime_leaders(env, Shape(64, 64, 64), trials, 10.0, policy) is None
    got = retime_leaders(env, Shape(64, 64, 64), trials, 25.0, policy)
    assert got.rounds == 4 and set(got.arm_us) == {A} and got.seconds > 0


def test_a_tuning_job_retimes_long_shapes_and_leaves_short_ones_as_searched():
    spec = {"env": "synthetic", "acc": "f32", "b_layout": "col", "noise": 0.05, "seed": 3}
    agent = Agent(FeatureMap(ARMS))
    payload = {"env_spec": spec, "agent": agent.state_dict(), "budget_trials": 6, "batch": 2,
               "retime": Retime(top=2, min_us=20.0, rounds=5).describe()}
    big = tune_job(dict(payload, mnk="8192_8192_4096"))
    assert big["cublas_us"] >= 20.0 and big["retime"]["rounds"] == 5
    retimed = [t for t in big["trials"] if "search_us" in t]
    assert len(retimed) == 2 and all(t["us"] != t["search_us"] for t in retimed)
    assert big["best"]["us"] == min(t["us"] for t in big["trials"] if t["us"])
    small = tune_job(dict(payload, mnk="64_64_64"))
    assert "retime" not in small and not any("search_us" in t for t in small["trials"])


def _true_choice_us(env, record, min_speedup=1.01):
    shape = Shape(*map(int, record["mnk"].split("_")))
    best = Objective().choose(record, min_speedup)
    if best is None:
        return env.cublas_us(shape)
    return env.true_us(shape, Arm.from_dict(best["arm"]))


def _tables_true_geomean(shapes, noise, seed, top):
    truth = SyntheticEnv()
    spec = {"env": "synthetic", "acc": "f32", "b_layout": "col", "noise": noise, "seed": seed, "top": top}
    agent = Agent(FeatureMap(ARMS))
    logs = []
    for mnk in shapes:
        record = tune_job({"mnk": mnk, "env_spec": spec, "agent": agent.state_dict(), "budget_trials": 12,
                           "batch": 4, "retime": Retime(top=top, rounds=7).describe()})
        logs.append(math.log(_true_choice_us(truth, record)))
    return math.exp(sum(logs) / len(logs))


def test_retiming_under_measurement_noise_picks_faster_entries_than_the_single_measurement():
    # 24 long shapes, three seeds: the tables' true time (geomean) with and without re-timing the top 3
    shapes = [f"{m}_{n}_{k}" for m in (2048, 4096, 8192) for n in (2048, 8192) for k in (1024, 2048, 4096, 8192)]
    exact = [_tables_true_geomean(shapes, 0.0, 11, top) for top in (0, 3)]
    assert exact[1] == pytest.approx(exact[0], rel=1e-12)   # exact measurements: re-timing changes no choice
    ratios = [_tables_true_geomean(shapes, 0.06, seed, 3) / _tables_true_geomean(shapes, 0.06, seed, 0)
              for seed in (11, 12, 13)]
    assert math.prod(ratios) ** (1 / 3) < 0.996, ratios   # 6% noisy measurements: faster entries on the whole


def test_the_tune_command_retimes_and_records_it_in_the_records_and_the_table(tmp_path):
    import json

    from tuner.tune_cli import main

    grid = tmp_path / "grid.txt"
    grid.write_text("4096_4096_4096\n64_64_64\n")
    state, tables = tmp_path / "st", tmp_path / "tables"
    assert main(["--grid", str(grid), "--env", "synthetic", "--budget-trials", "6", "--state-dir", str(state),
                 "--tables-dir", str(tables), "--synthetic-noise", "0.05", "--retime-top", "2"]) == 0
    records = {r["mnk"]: r for r in map(json.loads, (state / "finished_f32_col.jsonl").read_text().splitlines())}
    assert "retime" in records["4096_4096_4096"] and "retime" not in records["64_64_64"]
    meta = json.loads((tables / "sm90_f32.json").read_text())["meta"]
    assert meta["tuner"]["retime_top"] == 2
    with pytest.raises(SystemExit):
        main(["--grid", str(grid), "--env", "synthetic", "--state-dir", str(state), "--retime-top", "2",
              "--retime-rounds", "0"])


def test_undo_gives_back_the_search_figures_and_a_retable_judges_by_either(tmp_path):
    import copy
    import json

    from tuner.arms import from_kernel_space
    from tuner.retable import main as retable
    from tuner.retime import undo

    real = from_kernel_space("f32", "col", "tables")[0]
    a, b = real[0], next(arm for arm in real if arm.config != real[0].config)
    record = _record(51.1, [(a, 49.0), (b, 53.0)])
    before = copy.deepcopy(record)
    apply(record, Retimed(49.0, {a: 57.0, b: None}, 0.4, 5, {b: "RuntimeError: x"}))
    assert undo(copy.deepcopy(record)) == before and undo(before) == before

    state = tmp_path / "st"
    state.mkdir()
    (state / "finished_f32_col.jsonl").write_text(json.dumps(record) + "\n")
    for flag, kernel in (([], "cublas"), (["--search-figures"], a.config)):
        out = tmp_path / f"t{len(flag)}.json"
        assert retable(["--state", str(state), "--acc", "f32", "--out", str(out), *flag]) == 0
        table = json.loads(out.read_text())
        assert [e["kernel"] for e in table["entries"]] == [kernel]
        assert table["meta"]["tuner"].get("search_figures", False) == bool(flag)


# ---- on the H200 ----------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_env_retimes_measured_arms_beside_cublas_in_the_same_units():
    import torch

    from tuner.gpu_env import GpuEnv
    from tuner.lt_arms import is_lt

    torch.cuda.set_device(0)
    env = GpuEnv("f32", "col", variant_set="smoke", lt_count=4, samples=3)
    shape = Shape(1024, 1024, 2048)
    cands = env.candidates(shape)
    arms = [a for a in cands if is_lt(a)][:2] + [a for a in cands if not is_lt(a) and a.config in env.built()][:1]
    measured = {arm: env.measure(shape, arm) for arm in arms}
    assert all(m.ok for m in measured.values()), {a.name: m.error for a, m in measured.items()}
    got = env.retime(shape, arms, rounds=3)
    assert got.rounds == 3 and got.seconds > 0 and not got.errors
    # the same kernels on the same operands: a re-timed median within 2x of the search's (units, operands, arms)
    assert 0.5 < got.cublas_us / env.cublas_us(shape) < 2.0
    for arm, m in measured.items():
        assert 0.5 < got.arm_us[arm] / m.us < 2.0, (arm.name, got.arm_us[arm], m.us)
