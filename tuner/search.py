"""One shape's search with the agent: propose a batch, build the missing variants together, measure, learn; stop at
the budget (trials and/or seconds, compile time included) or when `stop` says so.

Every shape first tries the cuBLASLt heuristic's top `lt_first` algorithms (free: nothing to compile, and often the
winners), then the agent's Thompson proposals, which prefer built variants. An arm whose measurement raises is a failed
trial (with the reason), never a failed search."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from tuner.agent import Agent, reward_of
from tuner.arms import Arm
from tuner.environment import Environment, Measurement
from tuner.lt_arms import LT_FIRST, is_lt
from tuner.shapes import Shape


@dataclass
class Trial:
    arm: Arm
    us: float | None
    speedup: float
    seconds: float
    error: str | None = None


@dataclass
class ShapeSearch:
    shape: Shape
    cublas_us: float
    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0  # measurement + compile time spent

    @property
    def best(self) -> Trial | None:
        ok = [t for t in self.trials if t.us is not None]
        return min(ok, key=lambda t: t.us) if ok else None

    def trials_to_reach(self, target_us: float) -> int | None:
        """1-based index of the first trial at or under target_us (None if never)."""
        for i, t in enumerate(self.trials, 1):
            if t.us is not None and t.us <= target_us:
                return i
        return None


def record(result: ShapeSearch, arm: Arm, meas: Measurement) -> Trial:
    trial = Trial(arm, meas.us, meas.speedup, meas.seconds, meas.error)
    result.trials.append(trial)
    result.seconds += meas.seconds
    return trial


def safe_measure(env: Environment, shape: Shape, arm: Arm, cublas_us: float) -> Measurement:
    """env.measure, with an exception turned into a failed measurement that says why."""
    try:
        return env.measure(shape, arm)
    except Exception as exc:  # noqa: BLE001 - one broken arm must not end the shape's search
        return Measurement(None, cublas_us, 0.0, f"{type(exc).__name__}: {exc}")


def agent_search(agent: Agent, env: Environment, shape: Shape, *, budget_trials: int | None = None,
                 budget_seconds: float | None = None, batch: int = 1,
                 stop: Callable[[ShapeSearch], bool] | None = None, learn: bool = True,
                 lt_first: int = LT_FIRST, prefer: Callable[[Arm], bool] | None = None,
                 prefer_count: int = 2) -> ShapeSearch:
    """prefer: arms of which the agent's `prefer_count` favourites are measured first (after the first cuBLASLt
    ranks), e.g. cheap-launch variants for a shape whose calls are mostly host time."""
    m, n, k = shape
    candidates = env.candidates(shape)
    X = agent.fm.matrix(m, n, k, env.acc, candidates)  # features once per shape
    agent.refresh()
    result = ShapeSearch(shape, env.cublas_us(shape))
    tried: set[Arm] = set()
    first = sorted((a for a in candidates if is_lt(a) and a.algo < lt_first), key=lambda a: a.algo)
    if agent.p.cover_families:  # one proposal per family, each from that family's arms alone
        for family in sorted({a.family for a in candidates if not is_lt(a)}):
            own = [a for a in candidates if a.family == family]
            first += agent.propose(m, n, k, env.acc, own, set(first), env.built(), count=1)
    if prefer is not None:
        preferred = [a for a in candidates if prefer(a)]
        first += agent.propose(m, n, k, env.acc, preferred, set(first), env.built(), count=prefer_count)
    limit = budget_trials if budget_trials is not None else math.inf
    while len(result.trials) < limit and len(tried) < len(candidates):
        if budget_seconds is not None and result.seconds >= budget_seconds:
            break
        want = int(min(batch, limit - len(result.trials)))
        arms = [a for a in first if a not in tried][:want]
        if len(arms) < want:
            leader = result.best.arm if result.best is not None else None
            arms += agent.propose(m, n, k, env.acc, candidates, tried | set(arms), env.built(),
                                  count=want - len(arms), X=X, leader=leader)
        missing = sorted({a.config for a in arms} - env.built())
        if missing:
            result.seconds += env.build(missing)  # one parallel build for the batch
        for arm in arms:
            tried.add(arm)
            trial = record(result, arm, safe_measure(env, shape, arm, result.cublas_us))
            if learn:
                agent.observe(m, n, k, env.acc, arm, reward_of(trial.speedup))
            if stop is not None and stop(result):
                return result
    return result
