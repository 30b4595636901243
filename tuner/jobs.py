"""One tuning job = one shape searched by the agent on one worker (a process bound to a GPU, or a Ray task).

The payload carries a snapshot of the shared model taken when the job was submitted; the job returns every trial,
and the coordinator adds them to the shared model (the statistics are sums, so the merge is exact). Environments
are cached per process so built/loaded variants survive from one job to the next."""
from __future__ import annotations

import os
import time

from tuner.agent import Agent
from tuner.objective import Objective
from tuner.retime import Retime, apply, retime_leaders
from tuner.search import LT_FIRST, agent_search
from tuner.shapes import parse_mnk

_ENVS: dict[tuple, object] = {}


def make_env(spec: dict):
    key = tuple(sorted((k, str(v)) for k, v in spec.items()))
    if key not in _ENVS:
        if spec["env"] == "synthetic":
            from tuner.synthetic import SyntheticEnv

            _ENVS[key] = SyntheticEnv(acc=spec["acc"], prebuilt=tuple(spec.get("prebuilt", ())),
                                      lt_count=spec.get("lt_arms", 0), noise=spec.get("noise", 0.0),
                                      seed=spec.get("seed", 0))
        elif spec["env"] == "gpu":
            from tuner.gpu_env import GpuEnv

            _ENVS[key] = GpuEnv(spec["acc"], spec["b_layout"], variant_set=spec.get("variant_set"),
                                jobs=spec.get("build_jobs"), lt_count=spec.get("lt_arms", 0))
        else:
            raise ValueError(f"unknown env {spec['env']!r}")
    return _ENVS[key]


def lt_sweep(payload: dict, cublas_us: float, lt_arms: int) -> tuple:
    """(budget_trials, budget_seconds, lt_first) of a job. A shape whose cuBLAS kernel takes at least
    payload["lt_sweep_us"] measures every explored cuBLASLt rank first, on top of the agent's budget: those arms need
    no compilation, their best is often within 1-2% of anything else on big shapes, and a budget shared with 50
    variants missed the 3-6% faster rank 6 on the biggest f32 shapes (session 3)."""
    trials, seconds = payload.get("budget_trials"), payload.get("budget_seconds")
    threshold = payload.get("lt_sweep_us") or 0
    if not threshold or cublas_us < threshold or lt_arms <= LT_FIRST:
        return trials, seconds, LT_FIRST
    extra = lt_arms - LT_FIRST
    if trials is None:
        return None, seconds, lt_arms
    return trials + extra, None if seconds is None else seconds * (trials + extra) / max(trials, 1), lt_arms


def tune_job(payload: dict) -> dict:
    t0 = time.perf_counter()
    spec = payload["env_spec"]
    if spec["env"] == "gpu" and payload.get("gpu") is not None:
        import torch

        torch.cuda.set_device(payload["gpu"])
    env = make_env(spec)
    t_env = time.perf_counter()
    agent = Agent.from_state_dict(payload["agent"], refresh=False)  # agent_search refreshes first
    shape = parse_mnk(payload["mnk"])
    t_agent = time.perf_counter()
    cublas_us = env.cublas_us(shape)  # operands, reference and cuBLAS timing (cached: the search reuses them)
    t_setup = time.perf_counter()
    objective = Objective.from_dict(payload.get("objective"))
    cheap = (lambda arm: arm.family == "sm80") if objective.host_bound(cublas_us) else None
    budget_trials, budget_seconds, lt_first = lt_sweep(payload, cublas_us, spec.get("lt_arms", 0))
    result = agent_search(agent, env, shape, budget_trials=budget_trials, budget_seconds=budget_seconds,
                          batch=payload.get("batch", 1), prefer=cheap, lt_first=lt_first)
    t_search = time.perf_counter()
    retimed = retime_leaders(env, shape, result.trials, result.cublas_us, Retime.from_dict(payload.get("retime")))
    t_end = time.perf_counter()
    best = result.best
    record = {
        "mnk": shape.mnk, "acc": spec["acc"], "b_layout": spec["b_layout"], "cublas_us": result.cublas_us,
        "seconds": result.seconds, "worker": payload.get("gpu"), "pid": os.getpid(),
        # where the job's wall time went (tuning cost report): environment, model snapshot, the shape's operands and
        # cuBLAS baseline, and the search itself (candidate list with the cuBLASLt heuristic query, trials)
        "job_seconds": {"env": t_env - t0, "agent": t_agent - t_env, "setup": t_setup - t_agent,
                        "search": t_search - t_setup, "retime": t_end - t_search, "total": t_end - t0},
        "best": None if best is None else {"arm": best.arm.to_dict(), "us": best.us, "speedup": best.speedup},
        "trials": [{"arm": t.arm.to_dict(), "us": t.us, "speedup": t.speedup, "error": t.error}
                   for t in result.trials],
    }
    return apply(record, retimed) if retimed is not None else record
