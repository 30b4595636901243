"""`python -m tuner.compare`: agent vs random vs exhaustive search on the same shapes.

Metric: trials until the best arm found so far is within 2% of the exhaustive best (us <= best_us / 0.98).
  exhaustive  = every candidate (it only knows its best is the best after measuring all of them);
  random      = exact expectation (N + 1) / (g + 1) over random orders (g = arms within 2%), and a seeded simulation;
  agent       = one shared model learning across the shapes in order, each shape with `budget` trials; a shape
                whose budget runs out before reaching 2% counts as N trials (as if it fell back to exhaustive).
Goal: agent <= 25% of exhaustive.
The agent and random search replay the exhaustive pass's measurements (`Replay`): on the GPU one pass per shape pays
for all three, and every method is scored on the same numbers (a live re-measurement of the best arm can land 1-2%
off the target by noise alone).

  python -m tuner.compare --env synthetic --n_shapes 40 --out results/compare_synthetic
  python -m tuner.compare --env gpu --grid shapes.txt --variant_set default --acc f32 --out results/compare_gpu"""
from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
from pathlib import Path

from tuner.agent import Agent, AgentParams
from tuner.baselines_search import exhaustive_search, expected_random_trials, random_search
from tuner.environment import Measurement
from tuner.features import FeatureMap
from tuner.search import ShapeSearch, agent_search
from tuner.shapes import Shape, read_grid

WITHIN = 0.98  # "within 2%": speedup >= 0.98 x the best speedup
GRID_VALUES = tuple(2**i for i in range(6, 15))  # 64 .. 16384, CUDA-L2's grid


def sample_shapes(n: int, seed: int) -> list[Shape]:
    rng = random.Random(seed)
    shapes: dict[Shape, None] = {}
    while len(shapes) < n:
        shapes.setdefault(Shape(*(rng.choice(GRID_VALUES) for _ in range(3))), None)
    return list(shapes)


class Replay:
    """An environment that answers with the measurements of one exhaustive pass (per shape), measuring nothing."""

    def __init__(self, env, truth: ShapeSearch):
        self.env, self.acc = env, env.acc
        self.shape, self.reference = truth.shape, truth.cublas_us
        self.results = {t.arm: Measurement(t.us, truth.cublas_us, t.seconds, t.error) for t in truth.trials}
        self.arms = list(self.results)

    def candidates(self, shape: Shape) -> list:
        assert shape == self.shape
        return list(self.arms)

    def built(self) -> set[str]:
        return {a.config for a in self.arms}  # the exhaustive pass built them all

    def build(self, configs: list[str]) -> float:
        return 0.0

    def measure(self, shape: Shape, arm) -> Measurement:
        return self.results[arm]

    def cublas_us(self, shape: Shape) -> float:
        return self.reference


def compare(env, shapes: list[Shape], *, budget_fraction: float = 0.25, params: AgentParams | None = None,
            random_seeds: int = 5, agent: Agent | None = None) -> dict:
    agent = agent or Agent(FeatureMap(env.arms if hasattr(env, "arms") else env.candidates(shapes[0])), params)
    rows = []
    for shape in shapes:
        truth = exhaustive_search(env, shape)
        replay = Replay(env, truth)
        n = len(truth.trials)
        target = truth.best.us / WITHIN
        good = sum(1 for t in truth.trials if t.us is not None and t.us <= target)
        budget = max(1, int(round(budget_fraction * n)))
        run = agent_search(agent, replay, shape, budget_trials=budget)
        reached = run.trials_to_reach(target)
        sims = [random_search(replay, shape, seed=s, stop=lambda r: r.trials[-1].us is not None
                              and r.trials[-1].us <= target).trials.__len__() for s in range(random_seeds)]
        rows.append({"mnk": shape.mnk, "flop": shape.flop, "candidates": n, "good": good, "exhaustive": n,
                     "random_expected": expected_random_trials(n, good), "random_sim": statistics.mean(sims),
                     "agent": reached if reached is not None else n, "agent_reached": reached is not None,
                     "agent_budget": budget, "best_speedup": truth.best.speedup,
                     "agent_best_speedup": run.best.speedup if run.best else 0.0})
    return {"rows": rows, "summary": summarize(rows)}


def summarize(rows: list[dict]) -> dict:
    def mean(key, part=rows):
        return statistics.mean(r[key] for r in part)

    half = rows[len(rows) // 2:]
    return {"shapes": len(rows), "exhaustive": mean("exhaustive"), "random_expected": mean("random_expected"),
            "random_sim": mean("random_sim"), "agent": mean("agent"),
            "agent_fraction_of_exhaustive": mean("agent") / mean("exhaustive"),
            "agent_reached_rate": mean("agent_reached"),
            "second_half": {"agent": mean("agent", half), "random_expected": mean("random_expected", half),
                            "exhaustive": mean("exhaustive", half)}}


def format_table(result: dict) -> str:
    s = result["summary"]
    lines = ["| method | mean trials to within 2% of the exhaustive best | fraction of exhaustive |", "|---|---|---|"]
    for key, label in (("exhaustive", "exhaustive"), ("random_expected", "random (expected)"),
                       ("random_sim", "random (simulated)"), ("agent", "agent")):
        lines.append(f"| {label} | {s[key]:.1f} | {s[key] / s['exhaustive']:.1%} |")
    lines.append(f"\nshapes: {s['shapes']}; agent reached 2% within its budget on {s['agent_reached_rate']:.0%}; "
                 f"second half: agent {s['second_half']['agent']:.1f} vs random "
                 f"{s['second_half']['random_expected']:.1f} trials")
    return "\n".join(lines)


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(x, [r["exhaustive"] for r in rows], "k-", label="exhaustive")
    ax.plot(x, [r["random_expected"] for r in rows], "C1o-", ms=3, label="random (expected)")
    ax.plot(x, [r["agent"] for r in rows], "C0s-", ms=3, label="agent (shared model, in order)")
    ax.set_yscale("log")
    ax.set_xlabel("shape (in tuning order)")
    ax.set_ylabel("trials to within 2% of best")
    ax.set_title("agent vs random vs exhaustive search")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(result: dict, out: Path, meta: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps({"meta": meta, **result}, indent=1))
    with open(out / "compare.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(result["rows"][0]))
        w.writeheader()
        w.writerows(result["rows"])
    (out / "compare.md").write_text(f"command: {meta.get('command')}\n\n{format_table(result)}\n")
    plot(result, out / "compare.png")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tuner.compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", choices=("synthetic", "gpu"), default="synthetic")
    p.add_argument("--grid", help="M_N_K file (default: --n_shapes sampled from CUDA-L2's grid values)")
    p.add_argument("--n_shapes", type=int, default=40)
    p.add_argument("--budget_fraction", type=float, default=0.25)
    p.add_argument("--acc", choices=("f32", "f16"), default="f32")
    p.add_argument("--b_layout", choices=("col", "row"), default="col")
    p.add_argument("--variant_set", default="default", help="gpu env: the kernel library's variant set")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat_penalty", type=float, default=AgentParams.repeat_penalty,
                   help="the agent's charge on more raster / swizzle settings of a measured variant (0: off)")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    shapes = read_grid(args.grid) if args.grid else sample_shapes(args.n_shapes, args.seed)
    if args.env == "synthetic":
        from tuner.synthetic import SyntheticEnv

        env = SyntheticEnv(acc=args.acc)
        meta = {"env": "synthetic"}
    else:
        from tuner import env_info
        from tuner.gpu_env import GpuEnv

        env = GpuEnv(args.acc, args.b_layout, variant_set=args.variant_set)
        meta = {"env": "gpu", **env_info.collect()}
    meta["command"] = "python -m tuner.compare " + " ".join(sys.argv[1:] if argv is None else argv)
    params = AgentParams(seed=args.seed, repeat_penalty=args.repeat_penalty)
    result = compare(env, shapes, budget_fraction=args.budget_fraction, params=params)
    write(result, Path(args.out), meta)
    print(format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
