"""The end of one shape's search: its leaders timed again beside cuBLAS, interleaved, before the table takes one.

Why: a search times each arm once (the median of a few graph replays, back to back in its own burst) and the table
keeps the fastest if it beats cuBLAS by 1%. On shapes of tens of µs and more that single burst misled a pass from
scratch where the committed tables (corrected by interleaved grid benchmarks, `tuner/confirm.py`) did not: session
29, 12288x4096x256 f32, the pass timed cuBLAS 51.1 µs and its best variant 50.8, so the table kept cuBLAS, which the
benchmark then timed at 59.8 µs beside the committed cuBLASLt choice at 48.8. Here the `top` fastest distinct arms
and the search's cuBLAS reference run again in `rounds` rounds, each round every one of them once in a fresh random
order (as `tuner.timing.run_interleaved` times a benchmark's competitors), on the same operands.

Their medians are put on the search's scale through the reference, t x cublas_us(search) / cublas_us(re-timed), and
replace those arms' figures in the shape's record (the search's own stays as `search_us`), so every consumer of
records (`Objective.choose`, `tuner.merge`, a resumed run's model) sees the re-timed figure. The cost is counted in
the shape's search seconds (the tuning-cost goal includes it)."""
from __future__ import annotations

from dataclasses import dataclass

from tuner.arms import Arm
from tuner.environment import Environment
from tuner.shapes import Shape


@dataclass(frozen=True)
class Retimed:
    """What an environment measured: the reference's and each arm's median µs (None: the arm failed to run again,
    with the reason in `errors`) and the wall seconds it cost."""
    cublas_us: float
    arm_us: dict[Arm, float | None]
    seconds: float
    rounds: int
    errors: dict[Arm, str] | None = None


@dataclass(frozen=True)
class Retime:
    top: int = 0          # leaders timed again (0: off)
    min_us: float = 20.0  # only shapes whose cuBLAS reference takes at least this long (shorter ones: host-bound)
    rounds: int = 5       # interleaved rounds after one warm-up round

    def __post_init__(self):
        if self.top < 0 or self.rounds < 1 or self.min_us < 0:
            raise ValueError(f"retime wants top >= 0, rounds >= 1, min_us >= 0; got {self}")

    def wanted(self, cublas_us: float) -> bool:
        return self.top > 0 and cublas_us >= self.min_us

    def describe(self) -> dict:
        return {"retime_top": self.top, "retime_min_us": self.min_us, "retime_rounds": self.rounds} if self.top else {}

    @classmethod
    def from_dict(cls, d: dict | None) -> "Retime":
        d = d or {}
        return cls(int(d.get("retime_top", 0)), float(d.get("retime_min_us", 20.0)), int(d.get("retime_rounds", 5)))


def leaders(trials, top: int) -> list[Arm]:
    """The `top` fastest distinct arms among a search's successful trials (tuner.search.Trial), fastest first."""
    ranked = sorted((t for t in trials if t.us is not None and t.us > 0), key=lambda t: t.us)
    out: list[Arm] = []
    for t in ranked:
        if t.arm not in out:
            out.append(t.arm)
        if len(out) == top:
            break
    return out


def retime_leaders(env: Environment, shape: Shape, trials, cublas_us: float, policy: Retime) -> Retimed | None:
    """The policy's re-timing of a finished search, or None where it does not apply (short shapes, no leader)."""
    if not policy.wanted(cublas_us):
        return None
    arms = leaders(trials, policy.top)
    return env.retime(shape, arms, policy.rounds) if arms else None


def apply(record: dict, retimed: Retimed) -> dict:
    """The job record with the re-timed figures in place of the search's (see the module doc); returns it."""
    scale = record["cublas_us"] / retimed.cublas_us
    errors = retimed.errors or {}
    for t in record["trials"]:
        arm = Arm.from_dict(t["arm"])
        hit = (retimed.arm_us[arm], errors.get(arm)) if arm in retimed.arm_us else None
        if hit is None or t.get("us") is None:
            continue
        us, error = hit
        t["search_us"] = t["us"]
        if us is None or us <= 0:
            t.update(us=None, speedup=0.0, error=f"retime: {error or 'no time'}")
        else:
            t.update(us=us * scale, speedup=record["cublas_us"] / (us * scale))
    _set_best(record)
    record["retime"] = {"rounds": retimed.rounds, "cublas_us": retimed.cublas_us, "seconds": retimed.seconds,
                        "arms": {Arm.from_dict(t["arm"]).name: t["us"] for t in record["trials"] if "search_us" in t}}
    record["seconds"] = record.get("seconds", 0.0) + retimed.seconds
    return record


def undo(record: dict) -> dict:
    """The record as its search left it (the search's figures back in place of the re-timed ones): the same trials
    judged without the re-timing, for a paired comparison of the two tables (`tuner.retable --search-figures`)."""
    if "retime" not in record:
        return record
    for t in record["trials"]:
        if "search_us" in t:
            us = t.pop("search_us")
            t.update(us=us, speedup=record["cublas_us"] / us)
            if (t.get("error") or "").startswith("retime: "):
                t["error"] = None
    _set_best(record)
    record["seconds"] -= record.pop("retime")["seconds"]
    return record


def _set_best(record: dict) -> None:
    ok = [t for t in record["trials"] if t.get("us") and not t.get("error")]
    best = min(ok, key=lambda t: t["us"]) if ok else None
    record["best"] = None if best is None else {"arm": best["arm"], "us": best["us"], "speedup": best["speedup"]}
