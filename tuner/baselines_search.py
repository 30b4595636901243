"""The searches the agent is compared with: random search (a uniformly random order of the candidates) and
exhaustive search (every candidate: the ground truth best, at the full cost)."""
from __future__ import annotations

import random
from typing import Callable

from tuner.environment import Environment
from tuner.search import ShapeSearch, record
from tuner.shapes import Shape


def ordered_search(env: Environment, shape: Shape, order, *, budget_trials: int | None = None,
                   stop: Callable[[ShapeSearch], bool] | None = None) -> ShapeSearch:
    result = ShapeSearch(shape, env.cublas_us(shape))
    for i, arm in enumerate(order):
        if budget_trials is not None and i >= budget_trials:
            break
        if arm.config not in env.built():
            result.seconds += env.build([arm.config])
        record(result, arm, env.measure(shape, arm))
        if stop is not None and stop(result):
            break
    return result


def random_search(env: Environment, shape: Shape, seed: int = 0, **kw) -> ShapeSearch:
    order = list(env.candidates(shape))
    random.Random(f"{seed}|{shape.mnk}").shuffle(order)
    return ordered_search(env, shape, order, **kw)


def exhaustive_search(env: Environment, shape: Shape, **kw) -> ShapeSearch:
    return ordered_search(env, shape, env.candidates(shape), **kw)


def expected_random_trials(n_candidates: int, n_good: int) -> float:
    """Expected 1-based position of the first of `n_good` marked items in a uniformly random order of
    `n_candidates`: (N + 1) / (g + 1). Exact, so comparisons against random search carry no sampling noise."""
    if not 1 <= n_good <= n_candidates:
        raise ValueError("need 1 <= n_good <= n_candidates")
    return (n_candidates + 1) / (n_good + 1)
