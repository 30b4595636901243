"""The search agent: a contextual bandit over the factorised config space with ONE reward model for all shapes.

  state   the shape (tuner.features.state): log M, N, K, alignment, arithmetic intensity, accumulator
  action  an arm: family, tile, cluster, schedule, scheduler (persistent / stream-K), stages + raster, swizzle, splits
  reward  log(measured speedup over cuBLAS)  (log: speedups multiply, errors are relative)
  model   Bayesian linear regression over phi(shape, arm) (tuner.features): posterior N(mu, noise² A⁻¹) with
          A = prior⁻¹ I + Σ phi phiᵀ, b = Σ phi r, mu = A⁻¹ b. Sufficient statistics add up, so experience from
          every shape (and from every worker) merges exactly.
  policy  Thompson sampling: draw w from the posterior, play the untried arm with the highest phi·w minus the
          compile cost of an arm whose variant is not built yet (prefer what is built, build only what looks worth
          it) and a charge on the other raster / swizzle settings of a variant measured already that does not lead
          (try more variants, not more settings of each). Exploration shrinks as the posterior tightens; it never
          enumerates the space. Optional (AgentParams): one forced trial per kernel family.
A failed arm (wrong result, cannot launch) is recorded with a strongly negative reward, so the model learns to avoid
its neighbourhood."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tuner.arms import Arm
from tuner.features import FeatureMap
from tuner.lt_arms import is_lt

FAILED_REWARD = math.log(0.25)  # a failing arm counts as a 4x slowdown


@dataclass
class AgentParams:
    prior_var: float = 1.0  # of each weight
    noise: float = 0.05  # std of log-speedup noise the model cannot explain
    explore: float = 1.0  # scale on the posterior draw (1 = plain Thompson sampling)
    compile_penalty: float = 0.03  # log-speedup units charged for an arm whose variant is not built
    # log-speedup units charged for an arm whose variant (config and split count) this shape has measured already and
    # that does not lead: its other raster / swizzle settings rarely move it by more (session 28: the best setting
    # beats a variant's median one by 0.5% at the median, > 2% in 11-14% of the records). Without it a from-scratch
    # pass spent 83% of its variant trials on settings of variants it had measured and never reached the split-K
    # variants that win small long-K shapes by 1.4-1.7x. On the H200 (session 29, one pass over the 1000-shape grid,
    # the same budget), with 0.3 a pass reaches 99.8% / 98.8% (f32 / f16) of the committed tables' kernel-only speedup
    # over torch.matmul on 120 shapes, where the pass without it reached 96.8% / 97.3% in the same run, and 99.3% /
    # 98.5% on 240 more. Replayed from the records (tuner.offline_replay) the gain levels off at 0.3. On the
    # synthetic space, where raster moves every arm by 2%, it costs one of four seeds (docs/tuner.md).
    repeat_penalty: float = 0.3
    # every shape measures the agent's favourite of each kernel family (sm90, splitk, sm80) before its free choices: a
    # linear model fitted on other shapes is confident where it is wrong (the from-scratch pass tried split-K on 1 of
    # 1000 f32 shapes; it wins several small ones by 1.5x). Off: in the replay it moved nothing beyond the seeds' spread
    cover_families: bool = False
    seed: int = 0


class Agent:
    def __init__(self, feature_map: FeatureMap, params: AgentParams | None = None):
        self.fm, self.p = feature_map, params or AgentParams()
        d = feature_map.dim
        self.A = np.eye(d) / self.p.prior_var  # precision (kept exact, for merging and saving)
        self.b = np.zeros(d)
        self.n_obs = 0
        self.rng = np.random.default_rng(self.p.seed)
        self.cov = np.eye(d) * self.p.prior_var  # A⁻¹, kept current by rank-1 (Sherman-Morrison) updates
        self._factor = None  # Cholesky factor of cov for the draws; refreshed once per shape (see refresh)

    # --- the model ----------------------------------------------------------------------------------------------
    def observe(self, m: int, n: int, k: int, acc: str, arm: Arm, reward: float) -> None:
        self.observe_phi(self.fm.phi(m, n, k, acc, arm), reward)

    def observe_phi(self, phi: np.ndarray, reward: float) -> None:
        self.A += np.outer(phi, phi)
        self.b += phi * reward
        self.n_obs += 1
        u = self.cov @ phi
        self.cov -= np.outer(u, u) / (1.0 + phi @ u)

    def merge(self, other_A: np.ndarray, other_b: np.ndarray, other_n: int, prior_A: np.ndarray | None = None):
        """Add another agent's experience (its statistics minus its prior) to this one."""
        prior = np.eye(self.fm.dim) / self.p.prior_var if prior_A is None else prior_A
        self.A += other_A - prior
        self.b += other_b
        self.n_obs += other_n
        self.refresh()

    def refresh(self) -> None:
        """Recompute cov from A exactly (no drift from rank-1 updates) and the draw factor. Called at the start of
        every shape: within a shape the draws use the mean of every observation and a slightly stale spread, which
        keeps a trial at O(d²) instead of a factorisation per draw."""
        self.cov = np.linalg.inv(self.A)
        self.cov = (self.cov + self.cov.T) / 2
        self._factor = np.linalg.cholesky(self.cov)

    def mean(self) -> np.ndarray:
        return self.cov @ self.b

    def sample(self) -> np.ndarray:
        """w ~ N(mu, (noise * explore)² cov)."""
        if self._factor is None:
            self.refresh()
        eps = self.rng.standard_normal(self.fm.dim)
        return self.mean() + self.p.noise * self.p.explore * (self._factor @ eps)

    # --- the policy ---------------------------------------------------------------------------------------------
    def scores(self, X: np.ndarray, arms: list[Arm], built: set[str], w: np.ndarray,
               repeated: set[tuple] = frozenset()) -> np.ndarray:
        """phi·w minus the charges: compile (variant not built) and repeat (the variant has had a trial already and
        does not lead: once every variant that looks within the charge has had one, the rest compete on the model)."""
        penalty = np.array([(0.0 if a.config in built else self.p.compile_penalty)
                            + (self.p.repeat_penalty if _variant(a) in repeated else 0.0) for a in arms])
        return X @ w - penalty

    def propose(self, m: int, n: int, k: int, acc: str, candidates: list[Arm], tried: set[Arm], built: set[str],
                count: int = 1, X: np.ndarray | None = None, leader: Arm | None = None) -> list[Arm]:
        """`count` distinct untried arms, one Thompson draw each (a batch to build and measure together). `leader`:
        the shape's fastest arm so far, whose variant's other knob settings go uncharged (refine the leader, do not
        polish the others)."""
        open_idx = [i for i, a in enumerate(candidates) if a not in tried]
        if not open_idx:
            return []
        arms = [candidates[i] for i in open_idx]
        Xo = (X[open_idx] if X is not None else self.fm.matrix(m, n, k, acc, arms))
        # cuBLASLt ranks are distinct algorithms, not knob settings of one
        repeated = {_variant(a) for a in tried if not is_lt(a)} - ({_variant(leader)} if leader is not None else set())
        chosen: list[int] = []
        for _ in range(min(count, len(arms))):
            s = self.scores(Xo, arms, built, self.sample(), repeated)
            s[chosen] = -np.inf
            chosen.append(int(np.argmax(s)))
            if not is_lt(arms[chosen[-1]]):  # a batch's later draws pay for its earlier picks too
                repeated.add(_variant(arms[chosen[-1]]))
        return [arms[i] for i in chosen]

    def best_predicted(self, m: int, n: int, k: int, acc: str, candidates: list[Arm],
                       built: set[str] | None = None, caution: float = 1.0) -> tuple[Arm | None, float]:
        """Choice for a shape never measured (the predictor); only built variants when `built` is given. Ranks by a
        lower confidence bound, mean - caution * std: an arm whose high mean is an extrapolation far from anything
        measured is not worth running blind. Returns (arm, its posterior-mean log speedup)."""
        arms = [a for a in candidates if built is None or a.config in built]
        if not arms:
            return None, float("-inf")
        X = self.fm.matrix(m, n, k, acc, arms)
        mean = X @ self.mean()
        std = self.p.noise * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, self.cov, X), 0.0))
        i = int(np.argmax(mean - caution * std))
        return arms[i], float(mean[i])

    # --- persistence --------------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"vocab": self.fm.to_dict()["vocab"], "A": self.A.tolist(), "b": self.b.tolist(), "n_obs": self.n_obs,
                "params": vars(self.p)}

    @classmethod
    def from_state_dict(cls, d: dict, refresh: bool = True) -> "Agent":
        """refresh=False leaves the factorisation to the caller's own refresh() (agent_search starts with one), so a
        tuning job factorises once, not twice; until then cov is the prior's."""
        fm = FeatureMap.from_vocab(d["vocab"])
        agent = cls(fm, AgentParams(**d["params"]))
        agent.A, agent.b, agent.n_obs = np.array(d["A"]), np.array(d["b"]), int(d["n_obs"])
        if refresh:
            agent.refresh()
        return agent


def _variant(arm: Arm) -> tuple:
    """What the repeat charge counts as one variant: the compiled config with its split count (a split-K config's
    splits are its algorithm); raster and swizzle are the knobs that rarely matter."""
    return arm.config, arm.splits


def reward_of(speedup: float) -> float:
    return math.log(speedup) if speedup > 0 else FAILED_REWARD
