"""The predictor: trained on some shapes, asked about shapes it never measured."""
import pytest

from tuner.agent import Agent, AgentParams
from tuner.arms import from_config
from tuner.compare import sample_shapes
from tuner.features import FeatureMap
from tuner.predictor import Predictor, heldout_eval
from tuner.search import agent_search
from tuner.synthetic import SyntheticEnv, synthetic_arms


def test_training_makes_held_out_predictions_better_than_an_untrained_model():
    shapes = sample_shapes(40, seed=5)
    train, held = shapes[:30], shapes[30:]
    env = SyntheticEnv()
    fm = FeatureMap(synthetic_arms())
    untrained = heldout_eval(Agent(fm, AgentParams(seed=0)), SyntheticEnv(), held)
    agent = Agent(fm, AgentParams(seed=0))
    for s in train:
        agent_search(agent, env, s, budget_trials=20)
    trained = heldout_eval(agent, SyntheticEnv(), held)
    assert trained["geomean_of_best"] > untrained["geomean_of_best"]
    assert trained["geomean_of_best"] > 0.7  # within ~25% of the best arm, without measuring anything
    # what the dispatcher runs: the predicted arm only where the model expects a win, else cuBLAS (1.0x)
    for row in trained["rows"]:
        assert row["dispatch_speedup"] == (row["speedup"] if row["predicted"] >= 1.0 else 1.0)
    strict = heldout_eval(agent, SyntheticEnv(), held, min_speedup=1e9)
    assert strict["geomean_dispatch_speedup"] == 1.0 and strict["predicted_used"] == 0


def test_dispatcher_hook_returns_a_kernel_config_and_knobs_and_round_trips(tmp_path):
    space = pytest.importorskip("kernels.space")
    configs = [c for c in space.variant_set("default") if c.acc == "f32" and c.b_layout == "col"]
    arms = [a for c in configs for a in from_config(c, space.runtime_knobs(c))]
    agent = Agent(FeatureMap(arms))
    for a in arms[:5]:  # teach it that the first config is good everywhere
        agent.observe(1024, 1024, 1024, "f32", a, 0.3)
    agent.refresh()  # exact covariance, as a loaded predictor has
    pred = Predictor(agent, {"f32/col": arms}, {c.name: c.to_dict() for c in configs}, min_speedup=1.0)
    cfg, knobs = pred(1024, 1024, 1024, "col", "f32")
    assert cfg.acc == "f32" and cfg.b_layout == "col" and set(knobs) == {"raster", "swizzle", "splits"}
    assert pred(1024, 1024, 1024, "row", "f32") is None  # no arms for that layout: leave it to cuBLAS
    loaded = Predictor.load(pred.save(tmp_path / "p.json"))
    assert loaded(1024, 1024, 1024, "col", "f32") == (cfg, knobs)
    strict = Predictor(agent, {"f32/col": arms}, {c.name: c.to_dict() for c in configs}, min_speedup=100.0)
    assert strict(1024, 1024, 1024, "col", "f32") is None  # not expected to beat cuBLAS: no prediction


def test_logged_eval_scores_predictions_with_the_held_out_shapes_own_records():
    from tuner.jobs import tune_job
    from tuner.logged_eval import logged_eval
    from tuner.tune_cli import absorb

    arms = synthetic_arms()
    agent = Agent(FeatureMap(arms), AgentParams(seed=0))
    records = []
    for shape in sample_shapes(24, seed=2):
        record = tune_job({"mnk": shape.mnk, "env_spec": {"env": "synthetic", "acc": "f32", "b_layout": "col"},
                           "agent": agent.state_dict(), "budget_trials": 30, "batch": 4})
        absorb(agent, "f32", record)
        records.append(record)
    built = {a.config for a in arms}
    result = logged_eval(records, "f32", arms, built, holdout=0.25, seed=1)
    assert (result["train_shapes"], result["held_shapes"]) == (18, 6)
    assert result["covered"] == sum(r["measured"] is not None for r in result["rows"]) <= 6
    for row in result["rows"]:
        assert row["used"] == (row["predicted"] >= 1.0)
    never = logged_eval(records, "f32", arms, built, holdout=0.25, seed=1, min_speedup=1e9)
    assert never["used"] == 0 and never["geomean_dispatch"] in (1.0, None)


def test_train_learns_from_records_and_predicts_the_arm_that_won_them(tmp_path):
    """Records where one built variant beat cuBLAS by 30% on every shape and the others lost: the trained predictor
    names that variant (with the knobs it was timed with) for a shape it never saw; the CLI saves a loadable one."""
    import gzip
    import json

    space = pytest.importorskip("kernels.space")
    from tuner.predictor import main, train

    configs = [c for c in space.variant_set("default") if c.acc == "f32" and c.b_layout == "col"]
    arms = [a for c in configs[:6] for a in from_config(c, space.runtime_knobs(c))[:1]]
    winner = arms[2]
    records = [{"mnk": f"{m}_{n}_{k}", "cublas_us": 10.0,
                "trials": [{"arm": a.to_dict(), "us": 10.0 / s, "speedup": s}
                           for a, s in ((a, 1.3 if a == winner else 0.8) for a in arms)]}
               for m in (256, 1024, 4096) for n in (512, 2048, 8192) for k in (256, 1024, 4096)]
    predictor = train(records, "f32", "col", "default", lt_arm_count=0)
    cfg, knobs = predictor(1500, 3000, 704, "col", "f32")
    assert (cfg.name, knobs) == (winner.config, winner.knobs)
    state = tmp_path / "run"
    state.mkdir()
    with gzip.open(state / "finished_f32_col.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))
    assert main(["--state", str(state), "--acc", "fp32", "--variant-set", "default", "--lt-arms", "0",
                 "--out", str(tmp_path / "p.json")]) == 0
    assert Predictor.load(tmp_path / "p.json")(1500, 3000, 704, "col", "f32") == (cfg, knobs)
    with pytest.raises(SystemExit):
        main(["--state", str(tmp_path), "--acc", "fp32", "--out", str(tmp_path / "none.json")])  # no records
