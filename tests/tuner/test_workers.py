"""Distribution logic on CPU: fake GPU ids, real worker processes, the synthetic environment."""
import pytest

from tuner.agent import Agent
from tuner.features import FeatureMap
from tuner.jobs import tune_job
from tuner.synthetic import synthetic_arms
from tuner.workers import LocalPool, inline_submit, schedule, visible_gpus

SPEC = {"env": "synthetic", "acc": "f32", "b_layout": "col"}
SHAPES = ["64_64_64", "128_256_512", "1024_1024_1024", "4096_64_4096", "256_2048_128"]


def _run(submit, slots):
    agent = Agent(FeatureMap(synthetic_arms()))
    seen_obs, results = [], []

    def payload(mnk):
        seen_obs.append(agent.n_obs)
        return {"mnk": mnk, "env_spec": SPEC, "agent": agent.state_dict(), "budget_trials": 4, "batch": 2}

    def done(mnk, rec):
        from tuner.tune_cli import absorb

        absorb(agent, "f32", rec)
        results.append(rec)

    assert schedule(SHAPES, slots, submit, payload, done) == len(SHAPES)
    return agent, seen_obs, results


def test_visible_gpus_from_an_explicit_list():
    assert visible_gpus("0,2, 3") == [0, 2, 3]


def test_inline_schedule_feeds_each_job_the_latest_model():
    agent, seen, results = _run(inline_submit(tune_job), [None])
    assert sorted(r["mnk"] for r in results) == sorted(SHAPES)
    assert seen == [0, 4, 8, 12, 16]  # one slot: every job starts from all earlier trials
    assert agent.n_obs == 4 * len(SHAPES)


def test_one_worker_process_per_fake_gpu():
    pool = LocalPool([0, 1], tune_job)
    try:
        agent, seen, results = _run(pool.submit, pool.slots)
    finally:
        pool.close()
    assert {r["worker"] for r in results} == {0, 1}
    assert len({r["pid"] for r in results}) == 2  # two processes, each bound to its slot
    assert seen[:2] == [0, 0] and max(seen) > 0  # two start in parallel; later ones see merged experience
    assert agent.n_obs == 4 * len(SHAPES)


def test_a_failing_job_is_reported_and_the_rest_complete():
    errors = []

    def submit(slot, payload):
        if payload["mnk"] == "bad":
            payload = dict(payload, mnk="0_0_0")  # invalid shape: the job raises
        return inline_submit(tune_job)(slot, payload)

    done = []
    n = schedule(["64_64_64", "bad", "128_128_128"], [None], submit,
                 lambda mnk: {"mnk": mnk, "env_spec": SPEC, "agent": Agent(FeatureMap(synthetic_arms())).state_dict(),
                              "budget_trials": 2}, lambda j, r: done.append(j), lambda j, e: errors.append(j))
    assert n == 2 and errors == ["bad"] and done == ["64_64_64", "128_128_128"]


def test_ray_tasks_when_ray_is_installed():
    ray = pytest.importorskip("ray")
    from tuner.workers import RayPool

    try:
        pool = RayPool("local", tune_job, gpus_per_task=0, slots=2, init_kwargs={"num_cpus": 2, "num_gpus": 0})
        agent, seen, results = _run(pool.submit, pool.slots)
    finally:
        ray.shutdown()
    assert sorted(r["mnk"] for r in results) == sorted(SHAPES)


def test_big_shapes_time_every_explored_cublaslt_rank_first_on_top_of_the_budget():
    from tuner.jobs import lt_sweep

    payload = {"budget_trials": 12, "budget_seconds": 0.4, "lt_sweep_us": 100.0}
    assert lt_sweep(payload, 50.0, 16) == (12, 0.4, 3)       # short kernels: the agent's budget as it was
    trials, seconds, lt_first = lt_sweep(payload, 800.0, 16)
    assert (trials, lt_first) == (25, 16) and seconds == pytest.approx(0.4 * 25 / 12)
    assert lt_sweep({**payload, "lt_sweep_us": 0}, 800.0, 16) == (12, 0.4, 3)
    assert lt_sweep(payload, 800.0, 2) == (12, 0.4, 3)        # nothing beyond the usual first ranks to sweep

    spec = {**SPEC, "lt_arms": 6}
    agent = Agent(FeatureMap(synthetic_arms()))
    big = tune_job({"mnk": "8192_8192_8192", "env_spec": spec, "agent": agent.state_dict(), "budget_trials": 4,
                    "batch": 2, "lt_sweep_us": 1e-9})
    ranks = [t["arm"]["algo"] for t in big["trials"]]
    assert ranks[:6] == list(range(6)) and len(ranks) == 4 + 3
