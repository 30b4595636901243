"""State and action features for the shared reward model.

state  (shape): log2 M, N, K; alignment of N and K; arithmetic intensity; accumulator.
action (arm):   one-hot of every factor (family, tile M/N/K, cluster, schedule, scheduler, stages, pdl, l2_prefetch,
                its cap, raster, swizzle, splits).
shape × arm:    what GEMM performance actually depends on — tile utilisation along M, N, K (padding waste), waves per
                SM and wave quantisation, K iterations per split, tile size against problem size.

cuBLASLt arms (family "cublaslt"): only two one-hots, the family and the algorithm's rank in the heuristic list;
their physical features are zero (cuBLASLt picks its own tiles), so the model learns per rank how its speedup varies
with the shape.

phi(shape, arm) = [onehots ⊗ z(shape), physical(shape, arm) ⊗ (1, log FLOP)], z = (1, log M, log N, log K, acc).
One linear model over phi is shared by every shape, so what one shape teaches ("big tiles waste work on skinny M",
"stream-K pays off when tiles < SMs") transfers to the next."""
from __future__ import annotations

import math
import numpy as np

from tuner.arms import FACTORS, KNOBS, LATER_FACTORS, Arm
from tuner.lt_arms import is_lt

SMS = 132  # H100/H200 SXM streaming multiprocessors
N_Z = 5  # z(shape) = (1, log M, log N, log K, acc)
N_PHYS = 8  # len(physical(...))
LOG_SCALE = 14.0  # log2(16384): shape logs land in [0, 1]
LT_FACTORS = ("family", "algo")  # the factors a cuBLASLt arm has
VARIANT_FACTORS = tuple(f for f in FACTORS + KNOBS if f != "algo")  # those of a built variant


def active_factors(arm: Arm) -> tuple[str, ...]:
    """The factors that describe this arm (one-hot features)."""
    return LT_FACTORS if is_lt(arm) else VARIANT_FACTORS


def alignment_of(n: int, k: int) -> int:
    """Largest fp16 access width (8, 4, 2, 1 elements) that divides both N and K."""
    for a in (8, 4, 2):
        if n % a == 0 and k % a == 0:
            return a
    return 1


def state(m: int, n: int, k: int, acc: str) -> np.ndarray:
    """The shape features (the bandit's context)."""
    ai = 2.0 * m * n * k / (2.0 * (m * k + k * n + m * n))  # FLOP per byte of fp16 operands
    return np.array([math.log2(m) / LOG_SCALE, math.log2(n) / LOG_SCALE, math.log2(k) / LOG_SCALE,
                     alignment_of(n, k) / 8.0, math.log2(ai) / 12.0, 1.0 if acc == "f16" else 0.0])


def _util(x: int, tile: int) -> float:
    return x / (math.ceil(x / tile) * tile)


def physical(m: int, n: int, k: int, arm: Arm) -> np.ndarray:
    if is_lt(arm):
        return np.zeros(N_PHYS)
    tiles = math.ceil(m / arm.tile_m) * math.ceil(n / arm.tile_n)
    splits = max(1, arm.splits)
    work_units = tiles * splits
    waves = work_units / SMS
    wave_eff = work_units / (math.ceil(waves) * SMS)
    k_iters = max(1.0, k / (arm.tile_k * splits))
    return np.array([
        math.log(_util(m, arm.tile_m)), math.log(_util(n, arm.tile_n)), math.log(_util(k, arm.tile_k)),
        math.log(wave_eff), min(math.log2(waves), 6) / 6, min(math.log2(k_iters), 10) / 10,
        float(waves < 1.0), math.log2(arm.tile_m * arm.tile_n) / 16 * math.log2(m * n) / 28,
    ])


def physical_many(m: int, n: int, k: int, arms: list[Arm]) -> np.ndarray:
    """physical() for many arms, vectorised (rows)."""
    tm = np.array([a.tile_m for a in arms], dtype=float)
    tn = np.array([a.tile_n for a in arms], dtype=float)
    tk = np.array([a.tile_k for a in arms], dtype=float)
    splits = np.maximum(1.0, np.array([a.splits for a in arms], dtype=float))
    ctm, ctn, ctk = np.ceil(m / tm), np.ceil(n / tn), np.ceil(k / tk)
    work = ctm * ctn * splits
    waves = work / SMS
    wave_eff = work / (np.ceil(waves) * SMS)
    k_iters = np.maximum(1.0, k / (tk * splits))
    out = np.stack([
        np.log(m / (ctm * tm)), np.log(n / (ctn * tn)), np.log(k / (ctk * tk)), np.log(wave_eff),
        np.minimum(np.log2(waves), 6) / 6, np.minimum(np.log2(k_iters), 10) / 10, (waves < 1.0).astype(float),
        np.log2(tm * tn) / 16 * math.log2(m * n) / 28,
    ], axis=1)
    out[[is_lt(a) for a in arms]] = 0.0
    return out


class FeatureMap:
    """Fixed one-hot vocabulary (from the candidate arms) + the feature layout; `dim` is the model's width."""

    def __init__(self, arms: list[Arm]):
        vocab = []
        for f in FACTORS + KNOBS:
            values = sorted({arm.factor(f) for arm in arms if f in active_factors(arm)}, key=str)
            if f in LATER_FACTORS and len(values) < 2:
                continue  # came later: without such twins among the candidates the features are what they were
            vocab += [(f, v) for v in values]
        self.vocab = vocab
        self.index = {fv: i for i, fv in enumerate(vocab)}
        self.n_onehot = len(vocab)
        self.dim = self.n_onehot * N_Z + N_PHYS * 2
        self._onehots: dict[Arm, np.ndarray] = {}

    def to_dict(self) -> dict:
        return {"vocab": [[f, v] for f, v in self.vocab]}

    @classmethod
    def from_vocab(cls, vocab) -> "FeatureMap":
        fm = cls.__new__(cls)
        fm.vocab = [(f, v) for f, v in vocab]
        fm.index = {fv: i for i, fv in enumerate(fm.vocab)}
        fm.n_onehot = len(fm.vocab)
        fm.dim = fm.n_onehot * N_Z + N_PHYS * 2
        fm._onehots = {}
        return fm

    def onehot(self, arm: Arm) -> np.ndarray:
        cached = self._onehots.get(arm)
        if cached is not None:
            return cached
        h = np.zeros(self.n_onehot)
        for f in active_factors(arm):
            i = self.index.get((f, arm.factor(f)))
            if i is not None:
                h[i] = 1.0
        self._onehots[arm] = h
        return h

    def phi(self, m: int, n: int, k: int, acc: str, arm: Arm) -> np.ndarray:
        s = state(m, n, k, acc)
        z = np.array([1.0, s[0], s[1], s[2], s[5]])
        p = physical(m, n, k, arm)
        lflop = math.log2(2.0 * m * n * k) / 45.0
        return np.concatenate([np.outer(self.onehot(arm), z).ravel(), p, p * lflop])

    def matrix(self, m: int, n: int, k: int, acc: str, arms: list[Arm]) -> np.ndarray:
        """phi for many arms at once (rows), the hot path of every proposal; equal to stacking phi()."""
        if not arms:
            return np.zeros((0, self.dim))
        s = state(m, n, k, acc)
        z = np.array([1.0, s[0], s[1], s[2], s[5]])
        h = np.stack([self.onehot(a) for a in arms])
        p = physical_many(m, n, k, arms)
        lflop = math.log2(2.0 * m * n * k) / 45.0
        return np.concatenate([(h[:, :, None] * z[None, None, :]).reshape(len(arms), -1), p, p * lflop], axis=1)

