"""`python -m tuner.tune`: tune a grid of shapes with the shared agent, write the tuned table and the predictor.

  python -m tuner.tune --grid ../shared/anchors/grid_1000.txt --acc fp32 --budget-trials 16 \
      --state-dir results/tune --tables-dir kernels/tables            # every visible GPU, one worker each
  ... --ray-address auto                                              # shape jobs as Ray tasks
  ... --env synthetic                                                 # CPU dry run of the whole pipeline

Resumable: finished shapes are appended to <state-dir>/finished_<acc>_<b_layout>.jsonl and skipped by a rerun; the
shared model is rebuilt from their trials. `--holdout-fraction` keeps shapes out of tuning and evaluates the
predictor on them (no search) into <state-dir>/heldout_<acc>_<b_layout>.json."""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from tuner.agent import Agent, AgentParams, reward_of
from tuner.arms import Arm
from tuner.features import FeatureMap
from tuner.lt_arms import DEFAULT_LT_ARMS, LT, LT_TOP_N, is_lt, lt_arms, lt_options
from tuner.objective import OBJECTIVES, Objective, parse_host_us
from tuner.progress import Progress
from tuner.retime import Retime
from tuner.shapes import parse_mnk, read_grid
from tuner.store import ResultStore, shape_key

ACC = {"fp32": "f32", "fp16": "f16", "f32": "f32", "f16": "f16"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tuner.tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", required=True, help="file of M_N_K lines")
    p.add_argument("--acc", choices=tuple(ACC), default="fp32")
    p.add_argument("--b-layout", choices=("col", "row"), default="col")
    p.add_argument("--budget-trials", type=int, default=16, help="arms measured per shape")
    p.add_argument("--budget-seconds", type=float, default=None, help="per shape, compile time included")
    p.add_argument("--batch", type=int, default=4, help="arms proposed (and built) together")
    p.add_argument("--env", choices=("gpu", "synthetic"), default="gpu")
    p.add_argument("--variant-set", default="all", help="kernel library variant set, or 'all' (whole space)")
    p.add_argument("--state-dir", default="results/tune")
    p.add_argument("--tables-dir", default=None, help="write <arch>_<acc>.json here (default kernels/tables for gpu)")
    p.add_argument("--gpus", default=None, help="GPU ids, e.g. 0,1 (default: all visible)")
    p.add_argument("--ray-address", default=None, help="run shape jobs as Ray tasks on this cluster")
    p.add_argument("--build-jobs", type=int, default=None, help="parallel nvcc jobs per worker")
    p.add_argument("--holdout-fraction", type=float, default=0.0)
    p.add_argument("--min-speedup", type=float, default=1.0, help="below this the table keeps cuBLAS")
    p.add_argument("--limit", type=int, default=None, help="tune only the first N shapes of the grid")
    p.add_argument("--deadline-seconds", type=float, default=None,
                   help="start no new shape after this long; the table gets what finished (resume later)")
    p.add_argument("--lt-arms", type=int, default=DEFAULT_LT_ARMS,
                   help=f"cuBLASLt heuristic ranks explored per shape (0..{LT_TOP_N}; 0: none)")
    p.add_argument("--lt-sweep-us", type=float, default=100.0,
                   help="shapes whose cuBLAS kernel takes at least this long first time every explored cuBLASLt rank, "
                        "on top of --budget-trials (0: off; tuner/jobs.py)")
    p.add_argument("--objective", choices=OBJECTIVES, default="kernel",
                   help="what the table optimizes: kernel-only time, or time per call with host cost (tuner/objective.py)")
    p.add_argument("--host-us", default=None, help="host µs per call by family for --objective call, e.g. sm80=5.7")
    p.add_argument("--lone-pdl", action="store_true",
                   help="--objective call: cost pdl variants with their base's kernel time (tuner/objective.py)")
    p.add_argument("--kernel-floor", type=float, default=0.97,
                   help="--objective call: only arms whose kernel is at least this fraction as fast as the fastest")
    p.add_argument("--repeat-penalty", type=float, default=AgentParams.repeat_penalty,
                   help="log-speedup charge on a non-leading variant's other raster/swizzle settings (tuner/agent.py)")
    p.add_argument("--cover-families", action="store_true",
                   help="measure the agent's favourite of every kernel family on each shape first (tuner/agent.py)")
    p.add_argument("--retime-top", type=int, default=0,
                   help="time each shape's N fastest arms again beside cuBLAS, interleaved, before the table takes one "
                        "(0: off; tuner/retime.py)")
    p.add_argument("--retime-us", type=float, default=20.0,
                   help="--retime-top: only shapes whose cuBLAS reference takes at least this many µs")
    p.add_argument("--retime-rounds", type=int, default=5, help="--retime-top: interleaved rounds")
    p.add_argument("--synthetic-noise", type=float, default=0.0,
                   help="--env synthetic: lognormal spread of each measurement (tuner/synthetic.py)")
    p.add_argument("--seed", type=int, default=0)
    return p


def objective_of(args) -> Objective:
    return Objective(args.objective, parse_host_us(args.host_us), args.kernel_floor, getattr(args, "lone_pdl", False),
                     getattr(args, "pdl_alone_factor", None), getattr(args, "loop_guard", False),
                     getattr(args, "mid_floor", None))


def candidate_arms(args) -> tuple[list[Arm], dict]:
    """Every arm the model knows (built variants × knobs, and cuBLASLt ranks), and the variants' configs by name."""
    if args.env == "synthetic":
        from tuner.synthetic import synthetic_arms

        return synthetic_arms() + lt_arms(args.lt_arms), {}
    from tuner.arms import from_kernel_space

    arms, configs = from_kernel_space(args.acc, args.b_layout, None if args.variant_set == "all" else args.variant_set)
    return arms + lt_arms(args.lt_arms), {name: cfg.to_dict() for name, cfg in configs.items()}


def split_holdout(shapes: list, fraction: float, seed: int) -> tuple[list, list]:
    if fraction <= 0:
        return shapes, []
    rng = random.Random(seed)
    held = set(rng.sample(range(len(shapes)), max(1, int(round(fraction * len(shapes))))))
    return [s for i, s in enumerate(shapes) if i not in held], [s for i, s in enumerate(shapes) if i in held]


def absorb(agent: Agent, acc: str, record: dict) -> None:
    """Add one finished shape's trials to the shared model."""
    m, n, k = parse_mnk(record["mnk"])
    for t in record["trials"]:
        agent.observe(m, n, k, acc, Arm.from_dict(t["arm"]), reward_of(t["speedup"]))


def table_entry(record: dict, configs: dict, b_layout: str, min_speedup: float,
                objective: Objective | None = None) -> dict:
    """The table entry of one finished shape: the objective's choice among its trials, or cuBLAS."""
    from tuner.tables import entry

    m, n, k = parse_mnk(record["mnk"])
    best = (objective or Objective()).choose(record, min_speedup)
    arm = Arm.from_dict(best["arm"]) if best is not None else None
    if arm is None or not (is_lt(arm) or arm.config in configs):
        kind = "gemmex_tn" if b_layout == "col" else "gemmex_nn"
        return entry(m, n, k, b_layout, "cublas", {"kind": kind}, {}, record["cublas_us"], record["cublas_us"])
    if is_lt(arm):  # cuBLASLt algorithm arm.algo of the shape's heuristic list (tuner/lt_arms.py)
        return entry(m, n, k, b_layout, LT, lt_options(arm), {}, best["us"], record["cublas_us"])
    return entry(m, n, k, b_layout, arm.config, configs[arm.config], arm.knobs, best["us"], record["cublas_us"])


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.acc = ACC[args.acc]
    if args.budget_trials < 1 or args.batch < 1:
        parser.error(f"--budget-trials and --batch must be >= 1, got {args.budget_trials} and {args.batch}")
    if args.variant_set != "all":
        from kernels.space import VARIANT_SETS

        unknown = [n for n in args.variant_set.split(",") if n.strip() and n.strip() not in VARIANT_SETS]
        if unknown:
            parser.error(f"--variant-set: unknown {unknown}; known: {sorted(VARIANT_SETS)}")
    try:
        grid = read_grid(args.grid)
    except (OSError, ValueError) as exc:
        parser.error(f"--grid: {exc}")
    objective = objective_of(args)
    try:
        retime = Retime(args.retime_top, args.retime_us, args.retime_rounds)
    except ValueError as exc:
        raise SystemExit(f"--retime-*: {exc}") from None
    if not 0 <= args.lt_arms <= LT_TOP_N:
        raise SystemExit(f"--lt-arms must be in 0..{LT_TOP_N}, got {args.lt_arms}")
    from tuner import env_info
    from tuner.jobs import tune_job
    from tuner.predictor import Predictor
    from tuner.workers import LocalPool, RayPool, inline_submit, schedule, visible_gpus

    state = Path(args.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    tag = f"{args.acc}_{args.b_layout}"
    shapes = grid[: args.limit]
    train, held = split_holdout(shapes, args.holdout_fraction, args.seed)
    arms, configs = candidate_arms(args)
    agent = Agent(FeatureMap(arms), AgentParams(seed=args.seed, repeat_penalty=args.repeat_penalty,
                                                cover_families=args.cover_families))
    store = ResultStore(state / f"finished_{tag}.jsonl")
    done = {k: v for k, v in store.load().items() if k.endswith(f"|{args.acc}|{args.b_layout}")}
    for record in done.values():
        absorb(agent, args.acc, record)
    todo = [s for s in train if shape_key(s.mnk, args.acc, args.b_layout) not in done]
    print(f"{len(shapes)} shapes: {len(done)} already tuned, {len(todo)} to tune, {len(held)} held out",
          file=sys.stderr)

    env_spec = {"env": args.env, "acc": args.acc, "b_layout": args.b_layout, "build_jobs": args.build_jobs,
                "variant_set": None if args.variant_set == "all" else args.variant_set, "lt_arms": args.lt_arms}
    if args.env == "synthetic" and args.synthetic_noise:
        env_spec.update(noise=args.synthetic_noise, seed=args.seed)
    if args.ray_address:
        pool = RayPool(args.ray_address, tune_job)
    elif args.env == "synthetic" or len(visible_gpus(args.gpus)) <= 1:
        pool = None  # one device: run in this process (keeps built kernels loaded, no spawn cost)
    else:
        pool = LocalPool(visible_gpus(args.gpus), tune_job)
    slots = pool.slots if pool else [(visible_gpus(args.gpus) or [None])[0]]
    submit = pool.submit if pool else inline_submit(lambda p: tune_job(dict(p, gpu=slots[0])))
    bar = Progress([], f"tune {tag}", total=len(todo))
    t0 = time.monotonic()

    def payload(shape) -> dict:
        return {"mnk": shape.mnk, "env_spec": env_spec, "agent": agent.state_dict(), "batch": args.batch,
                "budget_trials": args.budget_trials, "budget_seconds": args.budget_seconds,
                "lt_sweep_us": args.lt_sweep_us, "objective": objective.describe(), "retime": retime.describe()}

    def finished(shape, record) -> None:
        store.append(record)
        done[shape_key(record["mnk"], args.acc, args.b_layout)] = record
        absorb(agent, args.acc, record)
        bar.update()

    def failed(shape, exc) -> None:
        print(f"\n{shape.mnk}: job failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    def until_deadline(items):
        for item in items:
            if args.deadline_seconds is not None and time.monotonic() - t0 > args.deadline_seconds:
                print(f"\ndeadline: {args.deadline_seconds:.0f} s passed, remaining shapes left for a later run",
                      file=sys.stderr)
                return
            yield item

    try:
        schedule(until_deadline(todo), slots, submit, payload, finished, failed)
    finally:
        if pool:
            pool.close()
    bar.close()
    wall = time.monotonic() - t0

    built = None
    if args.env == "gpu":
        from tuner.jobs import make_env

        built = make_env(env_spec).built() if pool is None else None
    predictor = Predictor(agent, {f"{args.acc}/{args.b_layout}": arms}, configs, built, args.min_speedup)
    predictor.save(state / f"predictor_{tag}.json")
    summary = {"shapes": len(shapes), "tuned": len(done), "wall_seconds_this_run": wall,
               "search_seconds_total": sum(r["seconds"] for r in done.values())}
    if held:
        from tuner.jobs import make_env
        from tuner.predictor import heldout_eval

        if args.env == "gpu" and args.gpus:
            import torch

            torch.cuda.set_device(visible_gpus(args.gpus)[0])
        result = heldout_eval(agent, make_env(env_spec), held, oracle=args.env == "synthetic",
                              min_speedup=max(args.min_speedup, 1.0))
        (state / f"heldout_{tag}.json").write_text(json.dumps(result, indent=1))
        summary["heldout_geomean_speedup"] = result["geomean_speedup"]
        summary["heldout_geomean_of_best"] = result["geomean_of_best"]
        summary["heldout_geomean_dispatch_speedup"] = result["geomean_dispatch_speedup"]
    tables_dir = args.tables_dir or ("kernels/tables" if args.env == "gpu" else None)
    if tables_dir:
        from tuner.tables import merge_entries, read_table, table_path, write_table

        meta = env_info.collect()
        meta.update(acc=args.acc, arch=meta["arch"] if meta["arch"] != "none" else "sm90",
                    tuner={"budget_trials": args.budget_trials, "env": args.env, "variant_set": args.variant_set,
                           "lt_arms": args.lt_arms, "lt_sweep_us": args.lt_sweep_us, **objective.describe(),
                           **retime.describe()})
        path = table_path(tables_dir, meta["arch"], args.acc)
        new = [table_entry(r, configs, args.b_layout, args.min_speedup, objective) for r in done.values()]
        if args.env == "gpu":   # each cuBLASLt choice names the algorithm it timed, not only its rank here
            from kernels.dispatch import lt_identities_of
            from tuner.lt_identity import identities, stamp

            new, _ = stamp(new, args.acc, identities(new, args.acc, lt_identities_of()))
        old = read_table(path)["entries"] if path.exists() else []
        summary["table"] = str(write_table(path, meta, merge_entries(old, new)))
    (state / f"summary_{tag}.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
