"""The trained model as a config predictor for shapes that were never measured.

`Predictor(m, n, k, b_layout, acc)` -> (KernelConfig, runtime knobs) or None — the Dispatcher's `predictor` hook
(kernels.dispatch accepts a config or a (config, knobs) pair). It returns None, leaving the shape to cuBLAS, when the
model does not expect the best built variant to beat cuBLAS by `min_speedup`, or when the kernel library is absent.
cuBLASLt arms are never predicted: what rank i means is particular to each shape's heuristic list (a measured
cuBLASLt choice reaches the dispatcher through the table instead).

  d = Dispatcher.default(predictor=Predictor.load("kernels/tables/sm90_f32.model.json"))

`train` (and `python -m tuner.predictor`) fits one from the records of finished tuning runs, without a GPU:

    python -m tuner.predictor --state benchmarks/h200-2026-11-30-s3/tune --state … --acc f32 \
        --variant-set wide_pdl --out results/predictor_f32_col.json

`heldout_eval` measures what the prediction is worth on shapes held out from training: speedup vs cuBLAS when
running the predicted arm, how close that is to the best arm (when the environment can say), and — the figure that
matters — what the dispatcher gets with the predictor as its hook: the predicted arm where the model expects it to beat
cuBLAS by `min_speedup`, cuBLAS (1.0x) elsewhere. Session 1's 0.89x was the first figure: always running the arm."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from tuner.agent import Agent
from tuner.arms import Arm
from tuner.lt_arms import is_lt
from tuner.shapes import Shape


class Predictor:
    def __init__(self, agent: Agent, arms: dict[str, list[Arm]], configs: dict[str, dict] | None = None,
                 built: set[str] | None = None, min_speedup: float = 1.0):
        self.agent, self.arms = agent, arms  # arms: "acc/b_layout" -> candidates
        self.configs = configs or {}  # config name -> KernelConfig.to_dict()
        self.built, self.min_speedup = built, min_speedup

    def predict_arm(self, m: int, n: int, k: int, b_layout: str, acc: str) -> tuple[Arm, float] | None:
        candidates = [a for a in self.arms.get(f"{acc}/{b_layout}", []) if a.supports(m, n, k) and not is_lt(a)]
        arm, log_speedup = self.agent.best_predicted(m, n, k, acc, candidates, self.built)
        if arm is None or math.exp(log_speedup) < self.min_speedup:
            return None
        return arm, math.exp(log_speedup)

    def __call__(self, m: int, n: int, k: int, b_layout: str, acc: str):
        hit = self.predict_arm(m, n, k, b_layout, acc)
        if hit is None or hit[0].config not in self.configs:
            return None
        from kernels.config import KernelConfig

        arm = hit[0]
        return KernelConfig.from_dict(self.configs[arm.config]), arm.knobs

    predict = __call__

    def to_dict(self) -> dict:
        return {"agent": self.agent.state_dict(), "min_speedup": self.min_speedup,
                "built": sorted(self.built) if self.built is not None else None, "configs": self.configs,
                "arms": {key: [a.to_dict() for a in arms] for key, arms in self.arms.items()}}

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict()))
        return path

    @classmethod
    def from_dict(cls, d: dict) -> "Predictor":
        return cls(Agent.from_state_dict(d["agent"]),
                   {key: [Arm.from_dict(a) for a in arms] for key, arms in d["arms"].items()}, d.get("configs"),
                   set(d["built"]) if d.get("built") is not None else None, d.get("min_speedup", 1.0))

    @classmethod
    def load(cls, path: str | Path) -> "Predictor":
        """From a saved predictor, plain or gzipped (`.gz`: how the tuning records are committed)."""
        from tuner.results import read_json

        return cls.from_dict(read_json(path))


def heldout_eval(agent: Agent, env, shapes: list[Shape], oracle: bool = True, min_speedup: float = 1.0) -> dict:
    """For each held-out shape: measure the arm the model predicts (no search); with `oracle`, also the best arm of
    an exhaustive sweep. Geomeans of speedup vs cuBLAS, of predicted/best, and of what dispatch would run."""
    rows = []
    for shape in shapes:
        candidates = env.candidates(shape)
        variants = [a for a in candidates if not is_lt(a)]  # what the predictor may return
        arm, log_speedup = agent.best_predicted(*shape, env.acc, variants, env.built())
        if arm is None:
            arm, log_speedup = agent.best_predicted(*shape, env.acc, variants)
        got = env.measure(shape, arm) if arm.config in env.built() else None
        if got is None:
            env.build([arm.config])
            got = env.measure(shape, arm)
        row = {"mnk": shape.mnk, "arm": arm.name, "speedup": got.speedup, "predicted": math.exp(log_speedup)}
        used = row["predicted"] >= min_speedup  # Predictor.predict_arm's rule: else the dispatcher runs cuBLAS
        row["dispatch_speedup"] = got.speedup if used else 1.0
        if oracle:
            if hasattr(env, "true_us"):
                best_us = min(env.true_us(shape, a) for a in candidates)
            else:
                env.build(sorted({a.config for a in candidates} - env.built()))
                best_us = min((m.us for m in (env.measure(shape, a) for a in candidates) if m.ok), default=None)
            row["best_speedup"] = env.cublas_us(shape) / best_us if best_us else None
            row["of_best"] = row["speedup"] / row["best_speedup"] if row["best_speedup"] else None
        rows.append(row)

    def gm(key):
        vals = [r[key] for r in rows if r.get(key)]
        return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None

    return {"rows": rows, "geomean_speedup": gm("speedup"), "geomean_best_speedup": gm("best_speedup"),
            "geomean_of_best": gm("of_best"), "geomean_dispatch_speedup": gm("dispatch_speedup"),
            "min_speedup": min_speedup, "predicted_used": sum(r["predicted"] >= min_speedup for r in rows)}


def fit_agent(records: list[dict], acc: str, arms: list[Arm], seed: int = 0) -> Agent:
    """A fresh shared model (over `arms`) that has learned every trial of `records`, factorised for predicting."""
    from tuner.agent import AgentParams
    from tuner.features import FeatureMap
    from tuner.tune_cli import absorb

    agent = Agent(FeatureMap(arms), AgentParams(seed=seed))
    for record in records:
        absorb(agent, acc, record)
    agent.refresh()
    return agent


def train(records: list[dict], acc: str, b_layout: str = "col", variant_set: str | None = "wide_pdl",
          lt_arm_count: int = 16, min_speedup: float = 1.0, seed: int = 0) -> Predictor:
    """A Predictor whose model learned every trial of `records` (finished tuning records, tuner/store.py), choosing
    among the variants of `variant_set` (None: the whole space) — the ones a build of that set provides."""
    from tuner.arms import from_kernel_space
    from tuner.lt_arms import lt_arms

    arms, configs = from_kernel_space(acc, b_layout, variant_set)
    agent = fit_agent(records, acc, arms + lt_arms(lt_arm_count), seed)
    return Predictor(agent, {f"{acc}/{b_layout}": arms}, {name: c.to_dict() for name, c in configs.items()},
                     set(configs), min_speedup)


def main(argv=None) -> int:
    from tuner.retable import read_records
    from tuner.tune_cli import ACC

    p = argparse.ArgumentParser(description="Fit the config predictor from finished tuning records (no GPU).")
    p.add_argument("--state", action="append", required=True, help="folder of finished_<acc>_<layout>.jsonl(.gz); "
                                                                   "repeat for several runs")
    p.add_argument("--acc", choices=tuple(ACC), default="f32")
    p.add_argument("--b-layout", choices=("col", "row"), default="col")
    p.add_argument("--variant-set", default="wide_pdl", help="variants it may predict ('all': the whole space)")
    p.add_argument("--lt-arms", type=int, default=16, help="cuBLASLt ranks the records may hold (learned, never "
                                                           "predicted)")
    p.add_argument("--min-speedup", type=float, default=1.0)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    acc = ACC[args.acc]
    try:
        records = [r for state in args.state for r in read_records(Path(state), acc, args.b_layout)]
    except FileNotFoundError as error:
        p.error(str(error))
    predictor = train(records, acc, args.b_layout, None if args.variant_set == "all" else args.variant_set,
                      args.lt_arms, args.min_speedup)
    predictor.save(args.out)
    print(json.dumps({"out": args.out, "records": len(records), "trials": sum(len(r["trials"]) for r in records),
                      "variants": len(predictor.configs)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
