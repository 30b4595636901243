"""`python -m tuner.offline_replay`: a whole from-scratch tuning pass replayed on the CPU, from tuning records.

Every tuning run keeps every trial (`finished_<acc>_<layout>.jsonl[.gz]`). Pooled over several runs, the records give
per shape the measured speedup over cuBLAS of many arms (the median where runs measured one arm more than once). A
replayed pass runs the real agent and search (tuner.search.agent_search, the budgets of tuner.jobs.lt_sweep) over
the grid in order, one shared model, from an empty model, but every measurement is looked up in the pool: its
candidates per shape are the pooled arms. So search policies compare on identical numbers in seconds, without a GPU.

The score of a pass: per shape, the speedup of the best arm it found divided by the best pooled speedup (1.0 = it
found the best arm any run ever measured); the geomean over shapes, by size bucket.

Bias, stated: the pool holds what earlier searches chose to measure (their favourites' knob settings, dedicated
split-K runs), so a policy is scored on how well it finds the best of those, not of the whole space.

  python -m tuner.offline_replay --acc f32 --state benchmarks/h200-2026-11-30-s3/tune --state ... \\
      --policy base --policy repeat=0.03 --policy cover --policy cover,repeat=0.03
With --compare N, each policy instead runs the issue's comparison (tuner.compare: trials to reach 2% of the best,
against random and exhaustive search) over the pool, on N shapes spread evenly over the grid's order."""
from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

from tuner.agent import Agent, AgentParams
from tuner.arms import Arm
from tuner.compare import compare
from tuner.environment import Measurement
from tuner.features import FeatureMap
from tuner.jobs import lt_sweep
from tuner import retable
from tuner.lt_arms import DEFAULT_LT_ARMS
from tuner.search import agent_search
from tuner.shapes import BUCKETS, Shape, parse_mnk, read_grid
from tuner.summary import geomean


def read_records(folder: str | Path, acc: str, b_layout: str) -> list[dict]:
    """A run's records (tuner.retable's reader), or none where the run did not tune this accumulator and layout."""
    try:
        return retable.read_records(Path(folder), acc, b_layout)
    except FileNotFoundError:
        return []


class Pool:
    """Per shape: arm -> median measured speedup over cuBLAS (0.0 for an arm that only ever failed), the median
    cuBLAS time as the reference."""

    def __init__(self, records: list[dict]):
        speedups: dict[Shape, dict[Arm, list[float]]] = {}
        refs: dict[Shape, list[float]] = {}
        for rec in records:
            shape = parse_mnk(rec["mnk"])
            refs.setdefault(shape, []).append(rec["cublas_us"])
            arms = speedups.setdefault(shape, {})
            for t in rec["trials"]:
                arms.setdefault(Arm.from_dict(t["arm"]), []).append(t["speedup"] if t.get("us") else 0.0)
        self.speedup = {s: {a: statistics.median(v) for a, v in arms.items()} for s, arms in speedups.items()}
        self.reference = {s: statistics.median(v) for s, v in refs.items()}

    def arms(self) -> list[Arm]:
        return sorted({a for arms in self.speedup.values() for a in arms}, key=lambda a: a.name)

    def best(self, shape: Shape) -> float:
        return max(self.speedup[shape].values())


class PoolEnv:
    """The Environment protocol over a Pool: everything is built, nothing takes time."""

    def __init__(self, pool: Pool, acc: str):
        self.pool, self.acc = pool, acc
        self.arms = pool.arms()  # the feature vocabulary (tuner.compare builds its agent's from it)
        self._built = {a.config for a in self.arms}

    def candidates(self, shape: Shape) -> list[Arm]:
        return sorted(self.pool.speedup[shape], key=lambda a: a.name)

    def built(self) -> set[str]:
        return self._built

    def build(self, configs: list[str]) -> float:
        return 0.0

    def measure(self, shape: Shape, arm: Arm) -> Measurement:
        ref = self.pool.reference[shape]
        s = self.pool.speedup[shape][arm]
        return Measurement(ref / s if s > 0 else None, ref, 0.0, None if s > 0 else "failed in the records")

    def cublas_us(self, shape: Shape) -> float:
        return self.pool.reference[shape]


def parse_policy(text: str) -> AgentParams:
    """'base', 'cover', 'repeat=0.03', 'cover,repeat=0.03,explore=2' -> AgentParams."""
    params = AgentParams()
    for item in filter(None, text.split(",")):
        if item == "base":
            continue
        if item == "cover":
            params = replace(params, cover_families=True)
            continue
        key, _, value = item.partition("=")
        key = {"repeat": "repeat_penalty"}.get(key, key)
        if key not in AgentParams.__dataclass_fields__ or not value:
            raise ValueError(f"unknown policy item {item!r}")
        params = replace(params, **{key: type(getattr(params, key))(value)})
    return params


def replay_pass(pool: Pool, shapes: list[Shape], acc: str, params: AgentParams, *, budget_trials: int = 12,
                batch: int = 4, lt_arms: int = DEFAULT_LT_ARMS, lt_sweep_us: float = 100.0) -> list[dict]:
    """One pass over `shapes` (those in the pool), from an empty model; per shape what it found against the pool."""
    env = PoolEnv(pool, acc)
    agent = Agent(FeatureMap(pool.arms()), params)
    payload = {"budget_trials": budget_trials, "budget_seconds": None, "lt_sweep_us": lt_sweep_us}
    rows = []
    for shape in shapes:
        if shape not in pool.speedup:
            continue
        trials, _, lt_first = lt_sweep(payload, pool.reference[shape], lt_arms)
        run = agent_search(agent, env, shape, budget_trials=trials, batch=batch, lt_first=lt_first)
        found = run.best.speedup if run.best else 0.0
        rows.append({"mnk": shape.mnk, "flop": shape.flop, "trials": len(run.trials),
                     "found": found, "best": pool.best(shape), "ratio": found / pool.best(shape),
                     "families": sorted({t.arm.family for t in run.trials})})
    return rows


def compare_on_pool(pool: Pool, shapes: list[Shape], acc: str, params: AgentParams, count: int) -> dict:
    """tuner.compare over the pool: `count` of the pooled `shapes`, evenly spaced, in order; its summary."""
    pooled = [s for s in shapes if s in pool.speedup]
    picked = pooled[::max(1, len(pooled) // count)][:count]
    return compare(PoolEnv(pool, acc), picked, params=params, random_seeds=3)["summary"]


def summarize(rows: list[dict]) -> dict:
    def score(part):  # a shape whose every found arm failed scores ~0, not an error
        return geomean(max(r["ratio"], 1e-9) for r in part)

    out = {"shapes": len(rows), "all": score(rows),
           "within_2pct": sum(r["ratio"] >= 0.98 for r in rows) / max(len(rows), 1)}
    for _, lo, hi in BUCKETS:
        out[f"{lo:g}-{hi:g}"] = score([r for r in rows if lo <= r["flop"] < hi])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--state", action="append", required=True, help="folder of finished_<acc>_<layout>.jsonl[.gz]")
    p.add_argument("--acc", choices=("f32", "f16"), default="f32")
    p.add_argument("--b-layout", choices=("col", "row"), default="col")
    p.add_argument("--grid", default="tuner/grids/grid_1000.txt", help="shape order of the pass")
    p.add_argument("--policy", action="append", default=None, help="AgentParams overrides (see parse_policy)")
    p.add_argument("--seeds", type=int, default=3, help="passes per policy (agent seeds 0..n-1)")
    p.add_argument("--budget-trials", type=int, default=12)
    p.add_argument("--batch", type=int, default=4, help="arms proposed together (tuner.tune's default: 4)")
    p.add_argument("--compare", type=int, default=0, metavar="N",
                   help="run tuner.compare (agent vs random vs exhaustive) on N pooled shapes instead of a pass")
    p.add_argument("--out", default=None, help="write the summaries as JSON here")
    args = p.parse_args(argv)
    records = [r for folder in args.state for r in read_records(folder, args.acc, args.b_layout)]
    pool = Pool(records)
    shapes = read_grid(args.grid)
    print(f"pool: {len(records)} records, {len(pool.speedup)} shapes, "
          f"{statistics.median(len(v) for v in pool.speedup.values()):.0f} arms per shape (median)")
    results = {}
    for policy in args.policy or ["base"]:
        if args.compare:
            runs = [compare_on_pool(pool, shapes, args.acc, replace(parse_policy(policy), seed=seed), args.compare)
                    for seed in range(args.seeds)]
            mean = {k: statistics.mean(r[k] for r in runs) for k in ("agent_fraction_of_exhaustive", "agent",
                                                                       "random_expected", "exhaustive",
                                                                       "agent_reached_rate")}
            results[policy] = {"mean": mean, "runs": runs}
            print(f"{policy:32s} trials to 2%: agent {mean['agent']:.1f}, random {mean['random_expected']:.1f}, "
                  f"exhaustive {mean['exhaustive']:.1f}; agent {mean['agent_fraction_of_exhaustive']:.1%} of "
                  f"exhaustive (random {mean['random_expected'] / mean['exhaustive']:.1%}), reached within budget "
                  f"on {mean['agent_reached_rate']:.0%}", flush=True)
            continue
        runs = [summarize(replay_pass(pool, shapes, args.acc, replace(parse_policy(policy), seed=seed),
                                      budget_trials=args.budget_trials, batch=args.batch))
                for seed in range(args.seeds)]
        mean = {k: statistics.mean(r[k] for r in runs) for k in runs[0]}
        results[policy] = {"mean": mean, "runs": runs}
        spread = max(r["all"] for r in runs) - min(r["all"] for r in runs)
        print(f"{policy:32s} found/best {mean['all']:.4f} (spread {spread:.4f}) | "
              + " / ".join(f"{mean[f'{lo:g}-{hi:g}']:.4f}" for _, lo, hi in BUCKETS)
              + f" | within 2%: {mean['within_2pct']:.1%}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
