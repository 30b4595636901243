"""cuBLASLt algorithms as arms: in the arm space, the features, the search, the GPU environment (with a stand-in for
the heuristic list on the CPU), the table the tuner writes and what the dispatcher binds from it."""
import inspect
import json

import numpy as np
import pytest

from tuner.agent import FAILED_REWARD, Agent, AgentParams
from tuner.arms import Arm
from tuner.environment import Measurement
from tuner.features import N_PHYS, FeatureMap, physical
from tuner.lt_arms import LT, LT_ALIGN_BYTES, LT_TOP_N, is_lt, lt_arm, lt_arms, lt_options
from tuner.search import agent_search
from tuner.shapes import Shape
from tuner.synthetic import SyntheticEnv, synthetic_arms


def test_the_tuner_and_the_dispatcher_mean_the_same_heuristic_list():
    import kernels.cublas as cublas
    from kernels import dispatch, tuned_tables

    assert LT_TOP_N == cublas.DEFAULT_TOP_N == tuned_tables.LT_TOP_N
    assert cublas.CublasArm("lt_algo", 3).top_n == LT_TOP_N  # the plan the tuner times and the dispatcher binds
    assert LT_ALIGN_BYTES == dispatch.LT_ALIGN_BYTES
    assert inspect.signature(cublas.lt_algorithms).parameters["align_bytes"].default == LT_ALIGN_BYTES


def test_lt_arms_are_ranks_that_run_any_shape_and_survive_a_round_trip():
    arms = lt_arms(16)
    assert [a.algo for a in arms] == list(range(16)) and len(set(arms)) == 16
    assert all(is_lt(a) and a.config == LT and a.supports(127, 255, 511) for a in arms)
    assert arms[3].name == "cublaslt/a3" and lt_options(arms[3]) == {"kind": "lt_algo", "algo_index": 3}
    assert Arm.from_dict(arms[3].to_dict()) == arms[3]
    variant = synthetic_arms()[0]
    old_record = {k: v for k, v in variant.to_dict().items() if k != "algo"}  # written before cuBLASLt arms
    assert Arm.from_dict(old_record) == variant and not is_lt(variant) and variant.algo == -1
    assert len(lt_arms(100)) == LT_TOP_N
    with pytest.raises(ValueError):
        lt_arm(LT_TOP_N)


def test_features_tell_cublaslt_ranks_apart_from_each_other_and_from_variants():
    variants, lt = synthetic_arms(), lt_arms(8)
    fm = FeatureMap(variants + lt)
    assert ("family", LT) in fm.index and all(("algo", r) in fm.index for r in range(8))
    assert ("algo", -1) not in fm.index  # a variant's features are what they were before cuBLASLt arms
    h = fm.onehot(lt[2])
    assert h.sum() == 2 and h[fm.index[("family", LT)]] == 1 and h[fm.index[("algo", 2)]] == 1
    assert np.all(physical(1024, 512, 256, lt[2]) == np.zeros(N_PHYS))  # cuBLASLt picks its own tiles
    arms = variants[:5] + lt
    X = fm.matrix(1024, 512, 256, "f32", arms)
    assert np.allclose(X, np.stack([fm.phi(1024, 512, 256, "f32", a) for a in arms]))
    assert len({row.tobytes() for row in X}) == len(arms)


def test_search_tries_the_heuristic_top_first_and_learns_which_rank_wins():
    env = SyntheticEnv(lt_count=16)
    fm = FeatureMap(env.arms)
    agent = Agent(fm, AgentParams(seed=0))
    run = agent_search(agent, env, Shape(4096, 4096, 4096), budget_trials=8, batch=4)
    assert [t.arm.algo for t in run.trials[:3]] == [0, 1, 2]
    assert len({t.arm for t in run.trials}) == 8 and all(t.us for t in run.trials)
    cands = env.candidates(Shape(4096, 4096, 4096))
    assert sum(is_lt(a) for a in cands) == 16 and env.builds == len({t.arm.config for t in run.trials} - {LT})
    for shape in (Shape(8192, 8192, 8192), Shape(8192, 4096, 4096), Shape(4096, 8192, 8192)):
        agent_search(agent, env, shape, budget_trials=12, batch=4)
    # the model learnt that late ranks lose to early ones (the synthetic Lt time grows with the rank)
    lt_only = [a for a in env.candidates(Shape(8192, 8192, 4096)) if is_lt(a)]
    means = fm.matrix(8192, 8192, 4096, "f32", lt_only) @ agent.mean()
    assert means[0] > means[-1]


def test_cublaslt_arms_need_no_build_so_they_are_proposed_when_building_is_ruled_out():
    env = SyntheticEnv(lt_count=8)
    agent = Agent(FeatureMap(env.arms), AgentParams(compile_penalty=100.0))
    shape = Shape(1024, 1024, 1024)
    picks = agent.propose(*shape, "f32", env.candidates(shape), set(), env.built(), count=5)
    assert len(set(picks)) == 5 and all(is_lt(p) for p in picks)


class _BrokenArmEnv(SyntheticEnv):
    def measure(self, shape, arm):
        if is_lt(arm) and arm.algo == 1:
            raise RuntimeError("cublasLtMatmul(lt_algo[1]) failed with status 15")
        return super().measure(shape, arm)


def test_an_arm_that_raises_is_a_failed_trial_with_its_reason_not_a_failed_search():
    env = _BrokenArmEnv(lt_count=4)
    agent = Agent(FeatureMap(env.arms))
    run = agent_search(agent, env, Shape(2048, 2048, 2048), budget_trials=6, batch=2)
    assert len(run.trials) == 6
    broken = [t for t in run.trials if t.error]
    assert [t.arm.algo for t in broken] == [1] and "status 15" in broken[0].error and broken[0].speedup == 0.0
    assert Measurement(None, 1.0, 0.0).speedup == 0.0 and FAILED_REWARD < 0


# ---- the GPU environment on the CPU: the kernel library's arms, a stand-in for the heuristic list -------------------
@pytest.fixture
def gpu_env_cls():
    pytest.importorskip("kernels.space")
    from tuner.gpu_env import GpuEnv

    return GpuEnv


def test_gpu_env_offers_the_ranks_the_heuristic_lists(gpu_env_cls):
    calls = []

    def heuristic(m, n, k, b_layout, acc, top_n, align_bytes):
        calls.append((m, n, k, b_layout, acc, top_n, align_bytes))
        return list(range(5 if m == 64 else 40))

    env = gpu_env_cls("f32", "col", variant_set="default", lt_count=16, lt_list=heuristic)
    small, big = env.candidates(Shape(64, 256, 256)), env.candidates(Shape(4096, 4096, 4096))
    assert sorted(a.algo for a in small if is_lt(a)) == list(range(5))
    assert sorted(a.algo for a in big if is_lt(a)) == list(range(16))
    assert any(not is_lt(a) for a in big)
    assert calls[0] == (64, 256, 256, "col", "f32", LT_TOP_N, LT_ALIGN_BYTES)
    assert LT in env.built() and env.build([LT]) == 0.0


def test_gpu_env_without_a_heuristic_list_searches_the_variants_and_says_why(gpu_env_cls):
    def heuristic(*args, **kwargs):
        raise RuntimeError("cuBLASLt plan (descriptors + heuristic) failed with status 7")

    env = gpu_env_cls("f32", "col", variant_set="default", lt_count=16, lt_list=heuristic)
    cands = env.candidates(Shape(256, 256, 256))
    assert cands and not any(is_lt(a) for a in cands)
    assert "status 7" in env.lt_errors["256x256x256"]


# ---- from the search to the table to the dispatcher -------------------------------------------------------------
def test_a_cublaslt_winner_becomes_a_table_entry_the_dispatcher_binds(tmp_path):
    from kernels.dispatch import Dispatcher
    from kernels.tuned_tables import load_tables
    from tuner.tables import table_path, write_table
    from tuner.tune_cli import table_entry

    record = {"mnk": "8192_512_512", "cublas_us": 10.4,
              "best": {"arm": lt_arm(7).to_dict(), "us": 9.65, "speedup": 10.4 / 9.65}}
    lt = table_entry(record, {}, "col", 1.0)
    assert lt["kernel"] == "cublaslt" and lt["config"] == {"kind": "lt_algo", "algo_index": 7}
    assert lt["runtime"] == {"raster": 0, "swizzle": 0, "splits": 0} and (lt["us"], lt["cublas_us"]) == (9.65, 10.4)
    slower = dict(record, mnk="64_64_64", best=dict(record["best"], us=11.0, speedup=10.4 / 11.0))
    assert table_entry(slower, {}, "col", 1.0)["kernel"] == "cublas"  # not faster than cuBLAS: cuBLAS
    meta = {"gpu": "test", "arch": "sm90", "acc": "f32"}
    write_table(table_path(tmp_path, "sm90", "f32"), meta, [lt, table_entry(slower, {}, "col", 1.0)])
    made = []
    d = Dispatcher(tables=load_tables("sm90", tmp_path), arch="sm90", lt_algo_count=lambda *shape: 12,
                   arm_factory=lambda name, options: made.append((name, options)) or (lambda a, b, out, **kw: out))
    sel = d.select(8192, 512, 512, "col", "f32")
    assert (sel.kernel, sel.fallback) == ("cublaslt", None) and ("cublaslt", lt["config"]) in made
    assert d.select(64, 64, 64, "col", "f32").kernel == "cublas"


def test_synthetic_tuning_explores_cublaslt_arms_and_writes_a_loadable_table(tmp_path):
    from kernels.tuned_tables import load_table
    from tuner.tune_cli import main

    grid = tmp_path / "grid.txt"
    grid.write_text("4096_4096_4096\n8192_8192_8192\n64_64_64\n8192_4096_8192\n")
    state, tables = tmp_path / "st", tmp_path / "tables"
    assert main(["--grid", str(grid), "--env", "synthetic", "--budget-trials", "8", "--state-dir", str(state),
                 "--tables-dir", str(tables), "--lt-arms", "16"]) == 0
    records = [json.loads(line) for line in (state / "finished_f32_col.jsonl").read_text().splitlines()]
    assert all([t["arm"]["algo"] for t in r["trials"][:3]] == [0, 1, 2] for r in records)
    table = load_table(tables / "sm90_f32.json")
    assert len(table) == 4
    for r in records:
        e = table.lookup(*map(int, r["mnk"].split("_")), "col")
        if r["best"]["arm"]["family"] == LT and r["best"]["speedup"] >= 1.0:
            assert (e.kernel, e.config["algo_index"]) == ("cublaslt", r["best"]["arm"]["algo"])
    assert any(e.kernel == "cublaslt" for e in table.entries.values())


# ---- on the H200 ----------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_env_measures_cublaslt_ranks_against_cublas():
    import torch

    from tuner.gpu_env import GpuEnv

    torch.cuda.set_device(0)
    env = GpuEnv("f32", "col", variant_set="smoke", lt_count=4, samples=2)
    shape = Shape(256, 512, 1024)
    lt = [a for a in env.candidates(shape) if is_lt(a)]
    assert [a.algo for a in lt] == list(range(len(lt))) and 1 <= len(lt) <= 4
    for arm in lt[:2]:
        got = env.measure(shape, arm)
        assert got.ok and got.us > 0, got.error  # checked against fp64 (random-normal, zero-one), then timed
