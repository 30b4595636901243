"""Tables corrected by the grid benchmark: where the benchmark timed one of our own arms clearly faster than the
table's choice, in the same interleaved run, the entry takes that arm.

Why: tuning times arms in short bursts, one shape at a time; the benchmark runs every competitor round robin under
sustained load, where memory-bound and power-limited kernels rank differently (session 8: the sm90 variant of
16384x16384x128 f32 was 8% faster than cuBLAS in tuning and 13% slower in the benchmark). The benchmark's cuBLAS and
cuBLASLt baselines are the dispatcher's own arms (`kernels.cublas.CublasArm`: `cuBLAS-tn` is the `gemmex_tn` arm,
`cuBLASLt-auto-tuning-tn` records the `algo_index` it kept in the same top-32 heuristic list, and since session 55
that algorithm's identity, which the entry carries), so a baseline's time is that arm's time. B row-major entries
are corrected the same way from a `--b_layout row` run, by its NN baselines (`cuBLAS-nn` is `gemmex_nn`,
`cuBLASLt-auto-tuning-nn` an `lt_algo` of the NN list); a run corrects only the entries of its own layout. Built
variants that a run timed beside the table (`eval_one_file.sh --also_variants V` or `V@s2`: competitor `ours:V` /
`ours:V@s2`, with the knobs it ran) are arms too: a sweep of chosen variants over chosen shapes corrects the table
the same way (e.g. the row twins of the col choices on the row entries that run cuBLAS).

Two roles per entry, as the benchmark measures them: kernel-only time (CUDA graph replay) judges the entry's graph
choice, per-call time its eager choice. An f16 table may also take fp32-accumulating arms (more precise): the f32
run's baselines and the f32 table's own choice. Runs of the two accumulators are put on one scale through
torch.matmul, which both runs time identically (fp16 in, fp32 accumulation): a time t from the f32 run counts as
t x torch_f16 / torch_f32. Only shapes whose entry is still the one the benchmark measured are touched, and where
the fastest arm is the role's own choice timed again (a baseline that is that arm) the entry stands as it is. A
cuBLASLt choice without its algorithm's identity takes the one `ours` recorded running it (runs since session 57:
tuner.competitors), so the entry runs that algorithm wherever another list ranks it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from kernels.tuned_tables import LT_IDENTITY
from tuner.results import graph_timed, read_json

MARGIN = 0.97          # take an arm only when it ran in <= 97% of the table choice's time (the goal's floor)
REFERENCE = "torch.matmul"
ROLES = {"kernel": "graph", "call": "eager"}   # benchmark timing -> the table choice it measures
NO_KNOBS = {"raster": 0, "swizzle": 0, "splits": 0}
ARM_KEYS = ("kernel", "config", "runtime", "acc")
ENTRY_ORDER = ("m", "n", "k", "b_layout", "kernel", "config", "runtime", "acc", "us", "cublas_us")


LAYOUT_SUFFIX = {"col": "tn", "row": "nn"}   # the baselines that ran B in a table layout's form


def baseline_arm(name: str, info: dict, b_layout: str = "col") -> dict | None:
    """The table arm a baseline ran in a `b_layout` run, or None when it is not one of that layout's arms
    (torch.matmul; the other layout's cuBLAS form)."""
    suffix = LAYOUT_SUFFIX[b_layout]
    if name == f"cuBLAS-{suffix}":
        return {"kernel": "cublas", "config": {"kind": f"gemmex_{suffix}"}, "runtime": dict(NO_KNOBS)}
    if name == f"cuBLASLt-auto-tuning-{suffix}" and "algo_index" in info:
        config = {"kind": "lt_algo", "algo_index": int(info["algo_index"])}
        if isinstance(info.get("algo"), dict):   # its identity (runs since session 55 record it)
            config["algo"] = {key: int(info["algo"][key]) for key in LT_IDENTITY}
        return {"kernel": "cublaslt", "config": config, "runtime": dict(NO_KNOBS)}
    return None


VARIANT_PREFIX = "ours:"


def variant_arm(name: str, info: dict, b_layout: str = "col") -> dict | None:
    """The table arm of a built variant a run timed as `ours:<name>[@knobs]` (its knobs from the run's info), or None
    when it is not a variant of that layout."""
    from kernels import space

    try:
        cfg = space.config_named(name.partition("@")[0])
    except KeyError:
        return None
    if cfg.b_layout != b_layout:
        return None
    knobs = info.get("runtime") or {}
    return {"kernel": cfg.name, "config": cfg.to_dict(),
            "runtime": {key: int(knobs.get(key, 0)) for key in NO_KNOBS}}


def choice(entry: dict, role: str, keys: tuple = ARM_KEYS) -> dict:
    """An entry's arm for a role ("graph" falls back to the eager choice, as the dispatcher does); keys: what of it
    (with "us": the arm and its time)."""
    source = entry.get("graph", entry) if role == "graph" else entry
    return {key: source[key] for key in keys if key in source}


@dataclass(frozen=True)
class Run:
    """One accumulator's benchmark of one table: what it measured and the table it measured."""
    acc: str                  # "f32" / "f16": the accumulator the run asked for
    results: dict             # mnk -> {competitor: result}
    table: dict               # (m, n, k, b_layout) -> entry of the table the run measured
    b_layout: str = "col"     # the layout the run gave ours (and the entries it can correct)
    meta: dict = field(default_factory=dict, compare=False)   # the run's meta (card, date, commit)

    @classmethod
    def load(cls, acc: str, results_path, table_path, kernel_only: bool = False) -> "Run":
        """kernel_only: leave out the run's per-call figures, so that its arms judge graph choices only (another
        run's per-call figures put on this one's scale through torch.matmul move by more than the margin on small
        shapes: session 40, 159 f16 eager choices in one H100 grid)."""
        results = read_json(results_path)
        if kernel_only:
            for shape in results["shapes"]:
                for result in shape["competitors"].values():
                    result.pop("call_us", None)
        b_layout = results["meta"].get("b_layout", "col")
        if b_layout not in LAYOUT_SUFFIX:
            raise ValueError(f"{results_path}: unknown b_layout {b_layout!r}")
        table = read_json(table_path)
        return cls(acc, {s["mnk"]: s["competitors"] for s in results["shapes"]},
                   {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in table["entries"]}, b_layout, results["meta"])


def candidates(mnk: str, role: str, run: Run, reference: dict) -> list[tuple[dict, dict]]:
    """({timing: µs on the confirmed run's scale}, arm) for every arm of ours that `run` timed on this shape;
    `reference` is the confirmed run's torch.matmul result for the shape. The graph role (kernel-only time) takes
    only graph-timed figures, the reference's included."""
    competitors = run.results.get(mnk) or {}
    ref = competitors.get(REFERENCE)
    if not ref or not ref.get("ok") or (role == "graph" and not graph_timed(ref)):
        return []
    out = []
    for name, result in competitors.items():
        if not result.get("ok") or (role == "graph" and not graph_timed(result)):
            continue
        if name == "ours":
            m, n, k = (int(x) for x in mnk.split("_"))
            entry = run.table.get((m, n, k, run.b_layout))
            arm = choice(entry, role) if entry is not None else None
        elif name.startswith(VARIANT_PREFIX):
            arm = variant_arm(name[len(VARIANT_PREFIX):], result.get("info") or {}, run.b_layout)
        else:
            arm = baseline_arm(name, result.get("info") or {}, run.b_layout)
        if arm is not None:
            # marks an fp32-accumulating arm (any arm of the f32 run; a variant an f16 run timed that accumulates in
            # fp32); dropped again in an f32 table
            if run.acc == "f32" or (arm.get("config") or {}).get("acc") == "f32":
                arm["acc"] = "f32"
            # a run timed kernel-only (--timing kernel) has no per-call figures: those arms judge the graph role only
            times = {t: result[f"{t}_us"] * reference[f"{t}_us"] / ref[f"{t}_us"] for t in ROLES
                     if all(x.get(f"{t}_us") for x in (result, reference, ref))}
            out.append((times, arm))
    return out


def confirm(entries: list[dict], acc: str, runs: list[Run], margin: float = MARGIN) -> tuple[list[dict], dict]:
    """The entries with each role's choice replaced where a run timed one of our arms at <= margin x its time;
    and counts. runs[0] benchmarked a table of this accumulator; an f16 table may add the f32 run."""
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be in (0, 1], got {margin}")
    if runs[0].acc != acc or any(r.acc not in (acc, "f32") for r in runs):
        raise ValueError(f"runs {[r.acc for r in runs]} cannot confirm an {acc} table (first: its own run)")
    if len({r.b_layout for r in runs}) != 1:
        raise ValueError(f"runs of one B layout correct a table together, got {[r.b_layout for r in runs]}")
    own = runs[0]
    out, counts = [], {"graph": 0, "eager": 0, "changed_since_benchmark": 0, "not_benchmarked": 0}
    for entry in entries:
        key = (entry["m"], entry["n"], entry["k"], entry["b_layout"])
        mnk = f"{entry['m']}_{entry['n']}_{entry['k']}"
        measured = own.results.get(mnk) or {}
        ours, reference = measured.get("ours"), measured.get(REFERENCE)
        if entry["b_layout"] != own.b_layout or not all(r and r.get("ok") for r in (ours, reference)):
            counts["not_benchmarked"] += 1
            out.append(entry)
            continue
        # each role is judged on the run only if the run measured that role's current choice
        measured_then = own.table.get(key)
        same = {role for role in ROLES.values()
                if measured_then is not None and choice(measured_then, role) == choice(entry, role)}
        if not same:
            counts["changed_since_benchmark"] += 1
            out.append(entry)
            continue
        picks = {}
        for timing, role in ROLES.items():
            if role not in same:
                continue
            if role == "graph" and not (graph_timed(ours) and graph_timed(reference)):
                # its kernel-only figure cannot judge the graph choice (a key only when it happens: the committed
                # tables' meta records every round's counts)
                counts["event_timed"] = counts.get("event_timed", 0) + 1
                continue
            if not (ours.get(f"{timing}_us") and reference.get(f"{timing}_us")):
                continue  # the run did not time this role's figure (--timing kernel or call)
            found = [c for run in runs for c in candidates(mnk, role, run, reference) if timing in c[0]]
            # per call, an arm must also be no slower kernel-only: single calls are noisy, and a min over several
            # arms would otherwise pick noise (a run timed per call only cannot show that: it changes no eager choice)
            kernel_floor = ours.get("kernel_us") or 0.0
            found = [c for c in found if timing == "kernel" or c[0].get("kernel", float("inf")) <= kernel_floor]
            times, best = min(found, key=lambda c: c[0][timing], default=(None, None))
            # the fastest being the role's own arm timed again (a baseline that is the table's choice: cuBLAS TN
            # where ours runs it) is run-to-run spread: the choice stands, and its time too; a cuBLASLt choice made
            # before runs recorded identities takes the one its algorithm has here (what lt_identity stamp does)
            if best is not None and _same_arm(_as_entry_arm(best, acc), choice(entry, role)):
                identity = (best.get("config") or {}).get("algo")
                if identity is not None and "algo" not in choice(entry, role)["config"]:
                    _stamp(entry, role, identity, picks, counts)
                continue
            if best is not None and times[timing] <= margin * ours[f"{timing}_us"]:
                picks[role] = dict(best, us=times["kernel"])   # a table's "us" is always kernel-only time
                counts[role] += 1
        for role in sorted(same - picks.keys()):
            # a cuBLASLt choice without an identity takes the one ours recorded running it (runs since session 57)
            if role not in picks and (identity := _ran_identity(ours.get("info"), choice(entry, role), role)):
                _stamp(entry, role, identity, picks, counts)
        out.append(with_picks(entry, acc, picks))
    return out, counts


def _same_arm(candidate: dict, current: dict) -> bool:
    """Whether a candidate is the choice itself; a choice without a cuBLASLt identity is the same algorithm at the
    same index of this run's list, whatever identity the candidate recorded."""
    if "algo" not in (current.get("config") or {}):
        candidate = dict(candidate, config={k: v for k, v in (candidate.get("config") or {}).items() if k != "algo"})
    return candidate == current


RAN_LT_ALGO = {"eager": "lt_algo", "graph": "graph_lt_algo"}   # ours' info: the cuBLASLt algorithm each role ran


def _ran_identity(info: dict | None, current: dict, role: str) -> dict | None:
    """The identity of the cuBLASLt algorithm ours ran for a role, where the role's choice is a cuBLASLt index
    without one and ours ran that very index (tuner.competitors records it); else None."""
    config = current.get("config") or {}
    ran = (info or {}).get(RAN_LT_ALGO[role])
    if current.get("kernel") != "cublaslt" or "algo" in config or not isinstance(ran, dict) \
            or not isinstance(ran.get("algo"), dict) or ran.get("algo_index") != config.get("algo_index"):
        return None
    return {key: int(ran["algo"][key]) for key in LT_IDENTITY}


def _stamp(entry: dict, role: str, identity: dict, picks: dict, counts: dict) -> None:
    """Picks the role's choice with a cuBLASLt identity added, in both roles where they run it (an entry without
    "graph" keeps none)."""
    for other in ROLES.values():
        if other not in picks and choice(entry, other) == choice(entry, role):
            picks[other] = _stamped(entry, other, identity)
            counts["stamped"] = counts.get("stamped", 0) + 1


def _stamped(entry: dict, role: str, identity: dict) -> dict:
    """A role's choice, as it stands with its time, with a cuBLASLt algorithm's identity added."""
    arm = choice(entry, role, (*ARM_KEYS, "us"))
    return dict(arm, config={**arm["config"], "algo": dict(identity)})


def _as_entry_arm(arm: dict, acc: str) -> dict:
    """A candidate arm as a table of `acc` holds it (its own accumulator is not written)."""
    return {key: value for key, value in arm.items() if not (key == "acc" and value == acc)}


def with_picks(entry: dict, acc: str, picks: dict) -> dict:
    """The entry with its eager and/or graph choice replaced; "graph" kept only where it differs from eager."""
    if not picks:
        return entry
    eager, graph = (_as_entry_arm(picks.get(role) or choice(entry, role, (*ARM_KEYS, "us")), acc)
                    for role in ("eager", "graph"))
    fields = {**{k: v for k, v in entry.items() if k not in (*ARM_KEYS, "us", "graph")}, **eager}
    new = {key: fields[key] for key in ENTRY_ORDER if key in fields}
    if any(eager.get(key) != graph.get(key) for key in ARM_KEYS):
        new["graph"] = {key: graph[key] for key in (*ARM_KEYS, "us") if key in graph}
    return new


def main(argv=None) -> int:
    import argparse
    from tuner.tables import layout_totals, meta_key, read_table, write_table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", required=True, help="the table to correct (e.g. what tuner.retable wrote)")
    p.add_argument("--run", required=True, action="append", metavar="ACC[:kernel]=RESULTS,TABLE",
                   help="a grid benchmark: its results.json(.gz) and the table it measured (.json/.gz); the table's "
                        "own accumulator first, then (f16) the f32 run; ACC:kernel takes only its kernel-only figures "
                        "(graph choices)")
    p.add_argument("--margin", type=float, default=MARGIN)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    table = read_table(args.table)
    acc = table["meta"]["acc"]
    runs = []
    for spec in args.run:
        try:
            run_acc, paths = spec.split("=", 1)
            results_path, table_path = paths.split(",")
            run_acc, _, mode = run_acc.partition(":")
            if mode not in ("", "kernel"):
                raise ValueError(mode)
        except ValueError:
            p.error(f"--run wants ACC[:kernel]=RESULTS,TABLE, got {spec!r}")
        runs.append(Run.load(run_acc, results_path, table_path, kernel_only=mode == "kernel"))
    try:
        entries, counts = confirm(table["entries"], acc, runs, args.margin)
    except ValueError as error:
        p.error(str(error))
    # the corrected table's own totals (meta.tuner keeps what tuning chose)
    layout = runs[0].b_layout
    totals = layout_totals(entries, layout)
    this_round = {"runs": [spec.split("=", 1)[0] for spec in args.run], "margin": args.margin, **counts, **totals}
    record = meta_key("confirmed", layout)
    if record in table["meta"]:  # a table corrected before: keep that round's record under this one's
        this_round["after"] = table["meta"][record]
    meta = {**table["meta"], record: this_round}
    write_table(args.out, meta, entries)
    print(json.dumps({"table": args.out, **counts}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
