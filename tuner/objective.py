"""What a tuned table optimizes per shape: kernel time (the default) or time per call with the host side included.

    kernel  the arm with the fastest kernel-only time, if it beats cuBLAS by --min-speedup (else cuBLAS)
    call    for host-bound shapes (the fastest kernel is shorter than cuBLAS's host work per call): among arms whose
            kernel is within --kernel-floor of the fastest (default 0.97: never more than ~3% slower on the GPU), the
            one with the least kernel + host time per call, if it beats cuBLAS by --min-speedup in kernel or in call
            time; for the other shapes, as `kernel`. With lone_pdl (--lone-pdl, the committed tables' setting), a pdl
            variant is costed with its base's kernel time, as a call on its own would see it (`lone_kernel_us`);
            off, with its back-to-back time; with --pdl-alone-factor (the committed tables: 1.6) a pdl variant
            without a timed base (splitk's, an untimed twin's) is costed as that multiple of its time, at most
            PDL_ALONE_MAX_EXTRA_US more; with --mid-floor F (the committed tables: 0.97) past the host-bound
            gate the least kernel + host time among kernels within F of the fastest; with --loop-guard (the
            committed tables since session 22) also, past the floor, an arm that is no slower in a loop of calls
            (max(host, kernel))

Why: for small shapes the host side is most of a call. For long kernels it is not: calls issued back to back overlap
the host work of one with the kernel of the one before, so a cheaper launch buys nothing there and a slower kernel
costs its full difference (session 3: without this rule the call table ran 3%-slower kernels on 100 µs shapes).
A built sm80 variant costs ~5.7 µs of host work per call through the C fast path, an sm90 one ~8 µs (docs/results.md,
session 2), against kernels of 3-10 µs. A cuBLAS or cuBLASLt arm is charged 20 µs: warm, in a loop, its host work is
~12-16 µs (`python -m kernels.overhead`), but a call on its own after the GPU ran other work (the per-call benchmark's
sync, call, sync) paid ~12-20 µs more than an sm90 arm of ours on the same shapes in session 15's grids, and session
16's A/B of this cost (with --pdl-alone-factor 1.6) made per-call time 5-19% faster on the entries it changed, in both
roles, kernel-only unchanged (docs/results.md, session 16). The host costs are per arm family and given with --host-us
when they differ (another host, another driver).
"""
from __future__ import annotations

from dataclasses import dataclass, field

OBJECTIVES = ("kernel", "call")
# Host µs per call by arm family, H200 host: sm80 and sm90 from kernels.overhead, 2026-11-30 (fast path -> sm80
# 5.6-5.9, sm90 7.0-9.3); cuBLAS and cuBLASLt as a lone call pays them (session 15's grids: 12-20 µs more per call
# than our sm90 arms on the same shapes; warm, in kernels.overhead, 11-16 µs incl. the fast path). Since session 16.
HOST_US_H200 = {"sm80": 5.7, "sm90": 8.0, "cublas": 20.0, "cublaslt": 20.0}
# What PDL hides of a call (the launch gap and the prologue) is a few µs whatever the kernel's length, so a PDL-only
# variant's lone call is costed min(factor x, this many µs more than) its back-to-back time. Session 16's A/B: with
# the factor alone, 12-20 µs shapes' eager choices moved from our PDL twins to cuBLAS, and 47 of the 51 it sampled
# ran >= 3% slower per call in both roles.
PDL_ALONE_MAX_EXTRA_US = 4.0
# A family without a host cost of its own is charged that of the family it launches like (splitk: TMA descriptors and
# cudaLaunchKernelEx, as sm90); any other, cuBLAS's.
HOST_LIKE = {"splitk": "sm90"}


def parse_host_us(text: str | None) -> dict[str, float]:
    """'sm80=5.7,sm90=8' -> the H200 defaults updated with those values."""
    costs = dict(HOST_US_H200)
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        name, sep, value = item.partition("=")
        if not sep or name not in costs:
            raise ValueError(f"--host-us wants family=µs pairs for {sorted(costs)}, got {item!r}")
        costs[name] = float(value)
        if costs[name] < 0:
            raise ValueError(f"host µs must be >= 0, got {item!r}")
    return costs


def lone_kernel_us(trials: list[dict], alone_factor: float | None = None):
    """trial -> its kernel time in a call of its own, or None where the trials cannot tell. Trials are timed back to
    back (graph replay), where a pdl variant's launch and prologue hide behind the kernel before it; one call after a
    synchronize gets none of that (H200, session 5: a twin 1.21x faster than its base back to back, equal per call). So
    a pdl trial is costed with its non-PDL base's best time in the same record (its tie-break keeps the pdl one).
    Without a base (splitk and its cluster schedule are built with PDL only) it is left out of per-call choices, or,
    given alone_factor, costed as that multiple of its back-to-back time (the records' sm90 twins below 12 µs ran
    their base at 1.32x / 1.24x their own time, median f32 / f16 col, 1.60x / 1.39x at the 90th percentile), but at
    most PDL_ALONE_MAX_EXTRA_US more."""
    base_us: dict[str, float] = {}
    for t in trials:
        if not t["arm"].get("pdl"):
            name = t["arm"]["config"]
            base_us[name] = min(t["us"], base_us.get(name, float("inf")))

    def alone(t: dict) -> float | None:
        if not t["arm"].get("pdl"):
            return t["us"]
        base = base_us.get(t["arm"]["config"].removesuffix("_pdl"))
        if base is None and alone_factor is not None:
            return min(t["us"] * alone_factor, t["us"] + PDL_ALONE_MAX_EXTRA_US)
        return base
    return alone


@dataclass(frozen=True)
class Objective:
    kind: str = "kernel"
    host_us: dict = field(default_factory=lambda: dict(HOST_US_H200))
    kernel_floor: float = 0.97
    lone_pdl: bool = False  # call: cost pdl trials as lone calls (lone_kernel_us); off: their back-to-back time
    pdl_alone_factor: float | None = None  # lone_pdl: a pdl trial without a timed base costs this x its time
    loop_guard: bool = False  # call: also eligible, beyond the kernel floor, what runs no slower in a loop
    mid_floor: float | None = None  # call: past the host-bound gate, the cheapest call among kernels this close

    def __post_init__(self):
        if self.kind not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.kind!r}")
        if not 0 < self.kernel_floor <= 1:
            raise ValueError(f"kernel floor must be in (0, 1], got {self.kernel_floor}")
        if self.pdl_alone_factor is not None and not (self.lone_pdl and self.pdl_alone_factor >= 1):
            raise ValueError(f"a pdl alone factor needs lone_pdl and must be >= 1, got {self.pdl_alone_factor}")
        if self.mid_floor is not None and not 0 < self.mid_floor <= 1:
            raise ValueError(f"mid floor must be in (0, 1], got {self.mid_floor}")

    def host(self, family: str) -> float:
        host = self.host_us.get(family)
        return self.host_us.get(HOST_LIKE.get(family, "cublas"), self.host_us["cublas"]) if host is None else host

    def call_us(self, kernel_us: float, family: str) -> float:
        return kernel_us + self.host(family)

    def loop_us(self, kernel_us: float, family: str) -> float:
        """Time per call of eager calls issued back to back: the host work of one overlaps the kernel of the one
        before, so the longer of the two."""
        return max(kernel_us, self.host(family))

    def cost(self, kernel_us: float, family: str) -> float:
        """What this objective minimizes for an arm whose kernel takes kernel_us: the time per call for host-bound
        kernels under `call`, else the kernel time."""
        return self.call_us(kernel_us, family) if self.host_bound(kernel_us) else kernel_us

    def choose(self, record: dict, min_speedup: float) -> dict | None:
        """The trial a table entry should run for this finished shape (a dict with "arm", "us", "speedup"), or None
        for cuBLAS."""
        best = record.get("best")
        by_kernel = best if best is not None and best["speedup"] >= min_speedup else None
        if self.kind == "kernel":
            return by_kernel
        cublas_us = record["cublas_us"]
        measured = [t for t in record["trials"] if t.get("us") and not t.get("error") and t.get("speedup", 0) > 0]
        alone = lone_kernel_us(measured, self.pdl_alone_factor) if self.lone_pdl else (lambda t: t["us"])
        costed = [t for t in measured if alone(t) is not None]
        fastest = min([alone(t) for t in costed] + [cublas_us])
        if not self.host_bound(fastest):
            return by_kernel if self.mid_floor is None else self._cheapest_close_call(measured, cublas_us, by_kernel)
        # loop guard: a slower kernel with a cheaper launch is no loss in a loop either while it stays within what
        # the fastest arm costs there (host-bound shapes: mostly that arm's host work)
        loop_limit = min([(alone(t), self.loop_us(alone(t), t["arm"]["family"])) for t in costed]
                         + [(cublas_us, self.loop_us(cublas_us, "cublas"))])[1] if self.loop_guard else -1.0
        eligible = [t for t in costed if alone(t) * self.kernel_floor <= fastest
                    or self.loop_us(alone(t), t["arm"]["family"]) <= loop_limit]
        if not eligible:
            return None
        best = min(eligible, key=lambda t: (self.call_us(alone(t), t["arm"]["family"]), t["us"]))
        # leaving cuBLAS takes a clear win (min_speedup, against measurement noise) in kernel or in call time
        call_speedup = self.call_us(cublas_us, "cublas") / self.call_us(alone(best), best["arm"]["family"])
        return best if max(cublas_us / alone(best), call_speedup) >= min_speedup else None

    def _cheapest_close_call(self, measured: list[dict], cublas_us: float, by_kernel: dict | None) -> dict | None:
        """Past the host-bound gate a loop of calls is paced by the kernel, but a call on its own still pays its host
        work (cuBLAS's, cold, 12-20 µs more than ours: HOST_US_H200). So among the arms whose back-to-back kernel time
        is within mid_floor of the fastest (cuBLAS's included), the one with the least kernel + host time; PDL twins
        at their own time, which a long kernel's lone call loses little of."""
        fastest = min([t["us"] for t in measured] + [cublas_us])
        close = [t for t in measured if t["us"] * self.mid_floor <= fastest]
        if not close:
            return by_kernel
        best = min(close, key=lambda t: (self.call_us(t["us"], t["arm"]["family"]), t["us"]))
        if cublas_us * self.mid_floor <= fastest and \
                self.call_us(cublas_us, "cublas") <= self.call_us(best["us"], best["arm"]["family"]):
            return None
        return best

    def host_bound(self, cublas_us: float) -> bool:
        """Whether a shape's calls are mostly host time (its cuBLAS kernel is shorter than cuBLAS's host work), so that
        a call-objective search should try cheap-launch arms first."""
        return self.kind == "call" and cublas_us < self.host_us["cublas"]

    def describe(self) -> dict:
        out = {"objective": self.kind}
        if self.kind == "call":
            out.update(host_us=dict(self.host_us), kernel_floor=self.kernel_floor)
            if self.lone_pdl:
                out["lone_pdl"] = True
            if self.pdl_alone_factor is not None:
                out["pdl_alone_factor"] = self.pdl_alone_factor
            if self.loop_guard:
                out["loop_guard"] = True
            if self.mid_floor is not None:
                out["mid_floor"] = self.mid_floor
        return out

    @classmethod
    def from_dict(cls, d: dict | None) -> "Objective":
        """The inverse of describe() (what a tuning job receives in its payload)."""
        d = d or {}
        return cls(d.get("objective", "kernel"), dict(d.get("host_us") or HOST_US_H200), d.get("kernel_floor", 0.97),
                   bool(d.get("lone_pdl", False)), d.get("pdl_alone_factor"), bool(d.get("loop_guard", False)),
                   d.get("mid_floor"))
