"""The agent's update rule and its value on a synthetic reward with structure (deterministic: fixed seeds)."""
import numpy as np
import pytest

from tuner.agent import Agent, AgentParams
from tuner.baselines_search import expected_random_trials, random_search
from tuner.compare import compare, sample_shapes
from tuner.features import FeatureMap
from tuner.search import agent_search
from tuner.shapes import Shape
from tuner.synthetic import SyntheticEnv, synthetic_arms


@pytest.fixture(scope="module")
def fm():
    return FeatureMap(synthetic_arms())


def test_posterior_is_ridge_regression_and_rank1_updates_match_inverse(fm):
    rng = np.random.default_rng(0)
    agent = Agent(fm, AgentParams(prior_var=10.0))
    w_true = rng.normal(size=fm.dim) * 0.1
    X = rng.normal(size=(3 * fm.dim, fm.dim))
    y = X @ w_true
    for x, r in zip(X, y):
        agent.observe_phi(x, r)
    ridge = np.linalg.solve(X.T @ X + np.eye(fm.dim) / 10.0, X.T @ y)
    assert np.allclose(agent.mean(), ridge, atol=1e-6)
    assert np.allclose(agent.cov, np.linalg.inv(agent.A), atol=1e-8)
    assert np.allclose(agent.mean(), w_true, atol=1e-2)


def test_merge_equals_observing_everything_in_one_agent(fm):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(40, fm.dim)), rng.normal(size=40)
    one, a, b = Agent(fm), Agent(fm), Agent(fm)
    for x, r in zip(X, y):
        one.observe_phi(x, r)
    for x, r in zip(X[:25], y[:25]):
        a.observe_phi(x, r)
    for x, r in zip(X[25:], y[25:]):
        b.observe_phi(x, r)
    a.merge(b.A, b.b, b.n_obs)
    assert a.n_obs == 40 and np.allclose(a.mean(), one.mean(), atol=1e-8)


def test_state_dict_round_trip_predicts_the_same(fm):
    env = SyntheticEnv()
    agent = Agent(fm)
    agent_search(agent, env, Shape(512, 1024, 2048), budget_trials=10)
    clone = Agent.from_state_dict(agent.state_dict())
    cands = env.candidates(Shape(256, 4096, 512))
    (arm, score), (arm2, score2) = (a.best_predicted(256, 4096, 512, "f32", cands) for a in (agent, clone))
    assert arm == arm2 and score == pytest.approx(score2, abs=1e-9)


def test_proposals_are_distinct_untried_and_prefer_built_variants(fm):
    env = SyntheticEnv()
    agent = Agent(fm, AgentParams(compile_penalty=10.0))  # building is prohibitively expensive
    cands = env.candidates(Shape(1024, 1024, 1024))
    built = {cands[0].config}
    tried = {cands[0]}
    picks = agent.propose(1024, 1024, 1024, "f32", cands, tried, built, count=5)
    assert len(set(picks)) == 5 and cands[0] not in picks
    assert all(p.config in built for p in picks)


def test_budget_in_trials_and_seconds_is_respected(fm):
    env = SyntheticEnv(compile_seconds=30.0, measure_seconds=1.0)
    run = agent_search(Agent(fm), env, Shape(2048, 2048, 2048), budget_trials=7, batch=3)
    assert len(run.trials) == 7
    run = agent_search(Agent(fm), SyntheticEnv(compile_seconds=30.0, measure_seconds=1.0), Shape(2048, 2048, 2048),
                       budget_seconds=40.0, batch=1)
    assert run.seconds >= 40.0 and len(run.trials) < 40  # stops once compile + measure time passes the budget


@pytest.mark.parametrize("seed", [0, 1])
def test_agent_beats_random_search_in_trials_to_two_percent(seed):
    # the model and its update rule alone: no repeat charge (the default policy's test is the next one)
    params = AgentParams(seed=seed, repeat_penalty=0.0)
    result = compare(SyntheticEnv(), sample_shapes(20, seed), params=params, random_seeds=1)
    s = result["summary"]
    assert s["agent"] < s["random_expected"]
    assert s["second_half"]["agent"] < s["second_half"]["random_expected"]  # still ahead once the model has learnt
    assert s["agent_fraction_of_exhaustive"] <= 0.25  # the goal


def test_the_default_policy_beats_random_search_over_four_seeds():
    # The repeat charge (on by default since the H200 pass of session 29) is worse than random on seed 0 of this
    # space (105 trials to 2% against 59: five long-K shapes need a stream-K split the model has learnt to rank low)
    # and far better on seeds 1-3 (11-13 against 57-58); the mean over the four is what this test holds it to.
    runs = [compare(SyntheticEnv(), sample_shapes(20, seed), params=AgentParams(seed=seed), random_seeds=1)["summary"]
            for seed in range(4)]
    mean = lambda key: np.mean([s[key] for s in runs])  # noqa: E731
    assert AgentParams().repeat_penalty > 0
    assert mean("agent") < mean("random_expected")
    assert np.mean([s["second_half"]["agent"] for s in runs]) < np.mean([s["second_half"]["random_expected"]
                                                                         for s in runs])
    assert mean("agent_fraction_of_exhaustive") <= 0.25


def test_expected_random_trials_matches_simulation():
    env = SyntheticEnv()
    shape = Shape(128, 16384, 1024)
    cands = env.candidates(shape)
    best = min(env.true_us(shape, a) for a in cands)
    good = sum(env.true_us(shape, a) <= best / 0.98 for a in cands)
    runs = [random_search(env, shape, seed=s, stop=lambda r: r.trials[-1].us <= best / 0.98) for s in range(300)]
    sim = np.mean([len(r.trials) for r in runs])
    assert sim == pytest.approx(expected_random_trials(len(cands), good), rel=0.15)


def test_the_comparison_measures_each_arm_once_and_replays_it_for_the_agent_and_random_search():
    class Counting(SyntheticEnv):
        calls = 0

        def measure(self, shape, arm):
            Counting.calls += 1
            return super().measure(shape, arm)

    env = Counting()
    shapes = sample_shapes(3, 7)
    result = compare(env, shapes, params=AgentParams(seed=0), random_seeds=2)
    assert Counting.calls == sum(r["candidates"] for r in result["rows"])  # the exhaustive passes, nothing more
    assert all(r["agent_budget"] >= 1 and 1 <= r["random_sim"] <= r["candidates"] for r in result["rows"])


def _favouring(fm, favourite, arms, shape):
    """An agent whose model has learnt (on this shape) that `favourite`'s variant is 2x faster than cuBLAS and every
    other arm 2x slower."""
    agent = Agent(fm, AgentParams(noise=0.01, repeat_penalty=0.0))
    for arm in arms:
        agent.observe(*shape, "f32", arm, np.log(2.0) if arm.config == favourite.config else np.log(0.5))
    agent.refresh()
    return agent


def test_a_repeat_charge_sends_the_next_trial_to_another_variant(fm):
    env = SyntheticEnv()
    shape = Shape(1024, 1024, 1024)
    cands = env.candidates(shape)
    favourite = cands[0]
    agent = _favouring(fm, favourite, cands[::3], shape)
    built = {a.config for a in cands}
    again = agent.propose(*shape, "f32", cands, {favourite}, built)[0]
    assert (again.config, again.splits) == (favourite.config, favourite.splits)  # without the charge: another
    agent.p.repeat_penalty = 10.0                                                # raster / swizzle of the same one
    other = agent.propose(*shape, "f32", cands, {favourite}, built)[0]
    assert (other.config, other.splits) != (favourite.config, favourite.splits)
    led = agent.propose(*shape, "f32", cands, {favourite}, built, leader=favourite)[0]
    assert (led.config, led.splits) == (favourite.config, favourite.splits)  # the leader's settings go uncharged


def test_family_cover_measures_every_kernel_family_of_a_shape(fm):
    env = SyntheticEnv()
    shape = Shape(2048, 2048, 2048)
    cands = env.candidates(shape)
    favourite = next(a for a in cands if a.family == "sm90")
    families = {a.family for a in cands}
    assert families == {"sm90", "sm80"}
    agent = _favouring(fm, favourite, cands[::3], shape)
    run = agent_search(agent, env, shape, budget_trials=2, lt_first=0)
    assert {t.arm.family for t in run.trials} == {"sm90"}  # the model's confidence keeps it on one family
    agent = _favouring(fm, favourite, cands[::3], shape)
    agent.p.cover_families = True
    run = agent_search(agent, env, shape, budget_trials=2, lt_first=0)
    assert {t.arm.family for t in run.trials} == families
