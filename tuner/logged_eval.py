"""`python -m tuner.logged_eval`: the predictor's held-out evaluation from tuning records, without a GPU.

    python -m tuner.logged_eval --state benchmarks/h200-2026-11-30-s3/tune --acc f16 [--holdout 0.15] [--seed 0]

The records of a grid run are split by shape; a fresh agent learns from the training shapes' trials (as tuning does),
then predicts a variant for each held-out shape without timing anything (tuner/predictor.py's rule: the best lower
confidence bound among the variants, used only if its expected speedup reaches --min-speedup, else cuBLAS). The
prediction is scored with what the held-out shape's own record measured for that arm. A record holds 12–30 of several
hundred arms, so only shapes whose record measured the predicted arm are scored ("covered"): the search tried the arms
the agent liked, so covered shapes lean towards good predictions — an estimate to choose a threshold by, not a
replacement for `heldout_eval` on the GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def logged_eval(records: list[dict], acc: str, arms: list, built: set[str], *, holdout: float = 0.15, seed: int = 0,
                min_speedup: float = 1.0) -> dict:
    from tuner.arms import Arm
    from tuner.lt_arms import is_lt
    from tuner.predictor import fit_agent
    from tuner.shapes import parse_mnk

    shuffled = sorted(records, key=lambda r: r["mnk"])
    random.Random(seed).shuffle(shuffled)
    n_held = max(1, round(holdout * len(shuffled)))
    held, train = shuffled[:n_held], shuffled[n_held:]
    agent = fit_agent(train, acc, arms, seed)
    rows = []
    for record in held:
        m, n, k = parse_mnk(record["mnk"])
        variants = [a for a in arms if not is_lt(a) and a.supports(m, n, k)]
        arm, log_speedup = agent.best_predicted(m, n, k, acc, variants, built)
        measured = {Arm.from_dict(t["arm"]): t["speedup"] for t in record["trials"]
                    if t.get("us") and not t.get("error")}
        speedup = measured.get(arm) if arm is not None else None
        predicted = math.exp(log_speedup) if arm is not None else 0.0
        rows.append({"mnk": record["mnk"], "arm": arm.name if arm else None, "predicted": predicted,
                     "measured": speedup, "used": predicted >= min_speedup,
                     "best_in_record": record["best"]["speedup"] if record.get("best") else None})
    covered = [r for r in rows if r["measured"] is not None]
    dispatch = [r["measured"] if r["used"] else 1.0 for r in covered]
    return {
        "acc": acc, "train_shapes": len(train), "held_shapes": len(held), "covered": len(covered),
        "min_speedup": min_speedup, "used": sum(r["used"] for r in covered),
        "used_and_slower_than_0.98": sum(1 for r in covered if r["used"] and r["measured"] < 0.98),
        "geomean_predicted_arm_always": geomean([r["measured"] for r in covered]),
        "geomean_dispatch": geomean(dispatch),
        "geomean_best_in_record": geomean([r["best_in_record"] for r in covered if r["best_in_record"]]),
        "rows": rows,
    }


def main(argv=None) -> int:
    from tuner.arms import from_kernel_space
    from tuner.lt_arms import lt_arms
    from tuner.retable import read_records
    from tuner.tune_cli import ACC

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--state", required=True, help="folder of finished_<acc>_<layout>.jsonl(.gz)")
    p.add_argument("--acc", choices=tuple(ACC), default="f32")
    p.add_argument("--b-layout", choices=("col", "row"), default="col")
    p.add_argument("--variant-set", default="wide", help="the variants the predictor may choose ('all': whole space)")
    p.add_argument("--lt-arms", type=int, default=16)
    p.add_argument("--holdout", type=float, default=0.15)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-speedup", type=float, default=1.0)
    p.add_argument("--out", default=None, help="write the full result (with rows) here as JSON")
    args = p.parse_args(argv)
    if not 0 < args.holdout < 1:
        p.error("--holdout must be in (0, 1)")
    acc = ACC[args.acc]
    records = read_records(Path(args.state), acc, args.b_layout)
    arms, configs = from_kernel_space(acc, args.b_layout, None if args.variant_set == "all" else args.variant_set)
    result = logged_eval(records, acc, arms + lt_arms(args.lt_arms), set(configs), holdout=args.holdout,
                         seed=args.seed, min_speedup=args.min_speedup)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items() if k != "rows"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
