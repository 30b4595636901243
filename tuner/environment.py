"""What the search talks to: an environment that lists candidate arms for a shape, knows which variants are built,
builds missing ones (in parallel batches), and measures an arm against cuBLAS.

Two implementations: `tuner.synthetic.SyntheticEnv` (deterministic, CPU, for tests and dry runs) and
`tuner.gpu_env.GpuEnv` (the kernel library on a real GPU)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tuner.arms import Arm
from tuner.shapes import Shape

if TYPE_CHECKING:
    from tuner.retime import Retimed


@dataclass(frozen=True)
class Measurement:
    us: float | None  # kernel-only µs; None when the arm failed (correctness, launch, cannot implement)
    cublas_us: float  # the reference the reward is relative to
    seconds: float  # wall time this measurement cost (part of the budget)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.us is not None and self.us > 0

    @property
    def speedup(self) -> float:
        return self.cublas_us / self.us if self.ok else 0.0


class Environment(Protocol):
    acc: str

    def candidates(self, shape: Shape) -> list[Arm]:
        """Arms that can run this shape."""

    def built(self) -> set[str]:
        """Config names already compiled."""

    def build(self, configs: list[str]) -> float:
        """Compile these configs (in parallel); returns the seconds it took."""

    def measure(self, shape: Shape, arm: Arm) -> Measurement:
        """Check, then time the arm kernel-only on this shape."""

    def cublas_us(self, shape: Shape) -> float:
        """The reference time (cuBLAS best of its arms) for the reward."""

    def retime(self, shape: Shape, arms: list[Arm], rounds: int) -> "Retimed":
        """Measured arms and the reference timed again, interleaved (tuner/retime.py; `tune --retime-top`)."""
