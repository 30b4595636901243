"""The offline replay of a tuning pass: the pool's medians, the environment it answers as, and a pass's score."""
import gzip
import json

import pytest

from tuner.agent import AgentParams
from tuner.offline_replay import (Pool, PoolEnv, compare_on_pool, main, parse_policy, read_records, replay_pass,
                                  summarize)
from tuner.shapes import Shape
from tuner.synthetic import SyntheticEnv, synthetic_arms


def _records(shapes, arms, speedup_of, runs=1):
    """Tuning records as tuner.jobs writes them: every arm measured on every shape, `runs` times."""
    env = SyntheticEnv()
    out = []
    for run in range(runs):
        for shape in shapes:
            ref = env.cublas_us(shape) * (1 + 0.01 * run)
            trials = [{"arm": a.to_dict(), "us": ref / speedup_of(shape, a, run) if speedup_of(shape, a, run) else None,
                       "speedup": speedup_of(shape, a, run), "error": None} for a in arms]
            out.append({"mnk": shape.mnk, "cublas_us": ref, "trials": trials})
    return out


def test_the_pool_keeps_each_arms_median_and_an_arm_that_failed_scores_zero():
    arms = synthetic_arms()[:3]
    shape = Shape(256, 512, 1024)
    speedups = {0: [1.0, 1.2, 1.1], 1: [0.5, 0.7, 0.6], 2: [0.0, 0.0, 0.0]}
    pool = Pool(_records([shape], arms, lambda s, a, run: speedups[arms.index(a)][run], runs=3))
    assert pool.speedup[shape][arms[0]] == pytest.approx(1.1)
    assert pool.speedup[shape][arms[1]] == pytest.approx(0.6)
    assert pool.speedup[shape][arms[2]] == 0.0 and pool.best(shape) == pytest.approx(1.1)
    env = PoolEnv(pool, "f32")
    assert env.measure(shape, arms[0]).speedup == pytest.approx(1.1)
    failed = env.measure(shape, arms[2])
    assert not failed.ok and failed.error
    assert set(env.candidates(shape)) == set(arms) and env.built() >= {a.config for a in arms}


def test_a_pass_with_every_arm_in_its_budget_finds_the_best_and_a_short_one_scores_its_find():
    arms = synthetic_arms()[:40]
    shapes = [Shape(64 << i, 1024, 512) for i in range(4)]
    env = SyntheticEnv()
    pool = Pool(_records(shapes, arms, lambda s, a, run: env.cublas_us(s) / env.true_us(s, a)))
    full = replay_pass(pool, shapes, "f32", AgentParams(), budget_trials=len(arms), lt_arms=0)
    assert [r["ratio"] for r in full] == pytest.approx([1.0] * 4)
    short = replay_pass(pool, shapes, "f32", AgentParams(), budget_trials=2, lt_arms=0)
    assert all(r["trials"] == 2 and 0 < r["ratio"] <= 1.0 for r in short)
    assert all(r["found"] == pytest.approx(r["ratio"] * r["best"]) for r in short)
    s = summarize(short)
    assert s["shapes"] == 4 and 0 < s["all"] <= 1.0 and s["within_2pct"] == sum(r["ratio"] >= 0.98 for r in short) / 4


def test_policies_parse_into_agent_params():
    assert parse_policy("base") == AgentParams()
    p = parse_policy("cover,repeat=0.05,explore=2")
    assert p.cover_families and p.repeat_penalty == 0.05 and p.explore == 2.0
    with pytest.raises(ValueError, match="unknown policy item"):
        parse_policy("repeats=1")


def test_the_command_reads_gzipped_records_and_writes_its_summary(tmp_path):
    arms = synthetic_arms()[:20]
    shapes = [Shape(128, 256, 512), Shape(512, 256, 128)]
    env = SyntheticEnv()
    records = _records(shapes, arms, lambda s, a, run: env.cublas_us(s) / env.true_us(s, a))
    with gzip.open(tmp_path / "finished_f32_col.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    assert len(read_records(tmp_path, "f32", "col")) == 2 and read_records(tmp_path, "f16", "col") == []
    (tmp_path / "grid.txt").write_text("128_256_512\n512_256_128\n64_64_64\n")
    out = tmp_path / "replay.json"
    assert main(["--state", str(tmp_path), "--grid", str(tmp_path / "grid.txt"), "--seeds", "2", "--policy", "base",
                 "--policy", "repeat=0", "--budget-trials", "3", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["results"]
    assert set(result) == {"base", "repeat=0"} and all(len(v["runs"]) == 2 for v in result.values())
    assert result["base"]["mean"]["shapes"] == 2  # the grid's shape without records is skipped


def test_the_comparison_on_the_pool_scores_the_agent_against_random_and_exhaustive_on_pooled_shapes(tmp_path):
    arms = synthetic_arms()[:40]
    shapes = [Shape(64 << i, 1024, 512) for i in range(6)]
    env = SyntheticEnv()
    records = _records(shapes, arms, lambda s, a, run: env.cublas_us(s) / env.true_us(s, a))
    s = compare_on_pool(Pool(records), [Shape(64, 64, 64), *shapes], "f32", AgentParams(seed=0), count=3)
    assert s["shapes"] == 3 and s["exhaustive"] == len(arms)  # every pooled arm is a candidate; unpooled skipped
    assert 1 <= s["agent"] <= len(arms) and 1 <= s["random_expected"] <= len(arms)
    with gzip.open(tmp_path / "finished_f32_col.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    (tmp_path / "grid.txt").write_text("".join(f"{x.mnk}\n" for x in shapes))
    out = tmp_path / "compare.json"
    assert main(["--state", str(tmp_path), "--grid", str(tmp_path / "grid.txt"), "--seeds", "2", "--compare", "4",
                 "--policy", "repeat=0", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["results"]["repeat=0"]
    assert [r["shapes"] for r in result["runs"]] == [4, 4]
    assert result["mean"]["agent_fraction_of_exhaustive"] == pytest.approx(result["mean"]["agent"] / len(arms))
