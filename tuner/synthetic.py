"""A deterministic synthetic GEMM environment for CPU tests and the comparison dry run.

Its run time has the structure real GEMMs have, so that learning across shapes helps: padded work from tile
quantisation, wave quantisation over 132 SMs, per-tile efficiency growing with tile size, split-K/stream-K helping
when there are fewer tiles than SMs, pingpong helping short K loops, clusters saving memory traffic on big shapes,
raster order matching the aspect ratio, a memory-bound floor and a launch latency; plus a small deterministic
per-(shape, arm) jitter (a hash, not a random generator) that no model can learn. cuBLAS is modelled as a fixed
shape-dependent factor over the best arm (strong on big shapes, weaker on small ones); a cuBLASLt arm of rank r
(`lt_count` > 0) as that reference times (0.985 + 0.005 r) with a ±2% jitter, so its top ranks sometimes beat it by a
few percent, as on the H200.

`noise` > 0 adds what the H200 adds on top: each measurement is the true time times a lognormal factor of that
spread (seeded), so a search's single figure can mislead and an interleaved re-timing (tuner/retime.py) can tell."""
from __future__ import annotations

import hashlib
import itertools
import math
import random
import statistics

from tuner.arms import Arm
from tuner.environment import Measurement
from tuner.features import SMS
from tuner.lt_arms import is_lt, lt_arms
from tuner.retime import Retimed
from tuner.shapes import Shape

PEAK_SM90 = 900e12  # FLOP/s of the whole chip at full tile efficiency
PEAK_SM80 = 420e12  # mma.sync path
HBM = 4.0e12  # bytes/s achievable
LAUNCH_US = 2.5
MEASURE_SAMPLES = 5  # graph replays per measurement, as tuner.gpu_env times them: a re-timing round costs one


def synthetic_arms(size: str = "small") -> list[Arm]:
    """A space shaped like kernels.space (sm90 + sm80 families, knobs); "small" (~300 arms) for fast tests."""
    small = size == "small"
    arms = []
    for tm, tn, tk, cl, sched, sch in itertools.product(
            (64, 128, 256), (64, 128, 256) if small else (64, 128, 192, 256), (64,) if small else (64, 128),
            ("1x1", "2x1") if small else ("1x1", "2x1", "1x2"), ("cooperative", "pingpong"),
            ("persistent", "streamk")):
        if (sched == "cooperative" and tm < 128) or (sched == "pingpong" and tm > 128):
            continue
        if sch == "streamk" and sched != "cooperative":
            continue
        if tm * tn > 256 * 128:  # register limit
            continue
        name = f"sm90_t{tm}x{tn}x{tk}_c{cl}_{sched[:4]}_{sch[:4]}"
        for raster, swizzle, splits in itertools.product((0, 1, 2), (1, 4) if small else (0, 1, 2, 4, 8),
                                                         (0, 2, 4) if sch == "streamk" else (0,)):
            arms.append(Arm(name, "sm90", tm, tn, tk, cl, sched, sch, 0, 8, raster, swizzle, splits))
    for tm, tn, tk, st in ((64, 64, 64, 5), (64, 128, 32, 6), (128, 128, 32, 4), (128, 64, 64, 3),
                           (256, 128, 32, 3), (128, 256, 64, 3)):
        name = f"sm80_t{tm}x{tn}x{tk}_s{st}"
        for splits in ((0, 2, 4) if small else (0, 1, 2, 4, 8, 16)):
            arms.append(Arm(name, "sm80", tm, tn, tk, "1x1", "", "", st, 8, 0, 0, splits))
    return arms


def _jitter(shape: Shape, arm: Arm, amplitude: float) -> float:
    digest = hashlib.blake2b(f"{shape.mnk}|{arm.name}".encode(), digest_size=8).digest()
    u = int.from_bytes(digest, "little") / 2**64  # uniform in [0, 1)
    return 1.0 + amplitude * (2 * u - 1)


def synthetic_us(shape: Shape, arm: Arm, jitter: float = 0.015) -> float:
    m, n, k = shape
    splits = max(1, arm.splits)
    tiles_m, tiles_n = math.ceil(m / arm.tile_m), math.ceil(n / arm.tile_n)
    k_per_split = math.ceil(k / splits / arm.tile_k) * arm.tile_k
    units = tiles_m * tiles_n * splits
    sms = SMS - SMS % arm.cluster_size
    waves = math.ceil(units / sms)
    peak = PEAK_SM90 if arm.family in ("sm90", "splitk") else PEAK_SM80  # splitk: wgmma, one warpgroup
    tile_eff = 1.0 - 0.55 * math.exp(-(arm.tile_m * arm.tile_n) / (128 * 96))
    if arm.family == "sm90" and arm.schedule == "pingpong":
        tile_eff *= 1.06 if k_per_split <= 4 * arm.tile_k else 0.97  # epilogue overlap wins on short K loops
    if arm.family == "sm80":
        tile_eff *= 1.0 + 0.02 * (arm.stages - 4)
    unit_s = 2.0 * arm.tile_m * arm.tile_n * k_per_split / (peak / SMS * tile_eff)
    compute_s = waves * unit_s
    traffic = 2.0 * (m * k * tiles_n + k * n * tiles_m) / max(1.0, min(tiles_m, tiles_n) ** 0.5) + 2.0 * m * n
    if arm.cluster_size > 1:
        traffic *= 0.85 if units >= sms else 1.1  # multicast pays on big shapes, costs on tiny ones
    memory_s = traffic / HBM
    reduce_s = (4.0 * m * n * splits / HBM + 1.5e-6) if splits > 1 else 0.0
    if arm.family == "splitk" and splits > 1:  # in L2, in the same kernel: no second launch, no workspace pass
        reduce_s = 4.0 * m * n * splits / (4 * HBM) + 0.8e-6
    if arm.scheduler == "streamk":
        reduce_s += 0.8e-6
    raster_gain = {0: 1.0, 1: 0.98 if m >= n else 1.02, 2: 0.98 if n > m else 1.02}[arm.raster]
    swizzle_gain = 1.0 - 0.01 * (arm.swizzle in (2, 4) and m * n >= 4096 * 4096)
    t = max(compute_s, memory_s) * raster_gain * swizzle_gain + reduce_s + LAUNCH_US * 1e-6
    return t * 1e6 * _jitter(shape, arm, jitter)


def cublas_factor(shape: Shape) -> float:
    """cuBLAS / best-arm time: ~1.02 on big shapes, up to ~1.3 on tiny ones."""
    return 1.02 + 0.28 / (1.0 + shape.flop / 2e9)


class SyntheticEnv:
    """The Environment protocol over synthetic_us; building costs `compile_seconds` per config, a measurement
    `measure_seconds`; `prebuilt` are config names compiled from the start."""

    def __init__(self, arms: list[Arm] | None = None, acc: str = "f32", prebuilt=(), compile_seconds: float = 30.0,
                 measure_seconds: float = 0.5, jitter: float = 0.015, lt_count: int = 0, noise: float = 0.0,
                 seed: int = 0):
        self.arms = (arms if arms is not None else synthetic_arms()) + lt_arms(lt_count)
        self.acc = acc
        self.noise, self._rng = noise, random.Random(seed)
        self._built = set(prebuilt)
        self.compile_seconds, self.measure_seconds, self.jitter = compile_seconds, measure_seconds, jitter
        self._cublas: dict[Shape, float] = {}
        self.builds = 0

    def candidates(self, shape: Shape) -> list[Arm]:
        return [a for a in self.arms if a.supports(*shape)]

    def built(self) -> set[str]:
        return self._built | {a.config for a in self.arms if is_lt(a)}  # cuBLASLt arms need no build

    def build(self, configs) -> float:
        missing = set(configs) - self.built()
        self._built |= missing
        self.builds += len(missing)
        # parallel batch: the batch costs one compile per `jobs`-wide wave (8 jobs)
        return math.ceil(len(missing) / 8) * self.compile_seconds

    def true_us(self, shape: Shape, arm: Arm) -> float:
        if is_lt(arm):
            return self.cublas_us(shape) * (0.985 + 0.005 * arm.algo) * _jitter(shape, arm, 0.02)
        return synthetic_us(shape, arm, self.jitter)

    def cublas_us(self, shape: Shape) -> float:
        if shape not in self._cublas:
            # cuBLAS runs any shape: where no variant supports it (N or K unaligned) it is modelled on all of them
            variants = [a for a in self.candidates(shape) if not is_lt(a)] or [a for a in self.arms if not is_lt(a)]
            self._cublas[shape] = min(self.true_us(shape, a) for a in variants) * cublas_factor(shape)
        return self._cublas[shape]

    def _observed(self, true_us: float) -> float:
        return true_us * math.exp(self._rng.gauss(0.0, self.noise)) if self.noise else true_us

    def measure(self, shape: Shape, arm: Arm) -> Measurement:
        if arm.config not in self.built():
            return Measurement(None, self.cublas_us(shape), 0.0, "not_built")
        return Measurement(self._observed(self.true_us(shape, arm)), self.cublas_us(shape), self.measure_seconds)

    def retime(self, shape: Shape, arms: list[Arm], rounds: int) -> Retimed:
        """Medians of `rounds` fresh measurements of each arm and of the reference; one measurement's cost each."""
        def median_of(true_us: float) -> float:
            return statistics.median(self._observed(true_us) for _ in range(rounds))

        cublas = median_of(self.cublas_us(shape))
        return Retimed(cublas, {arm: median_of(self.true_us(shape, arm)) for arm in arms},
                       self.measure_seconds * (len(arms) + 1) * (rounds + 1) / MEASURE_SAMPLES, rounds)
