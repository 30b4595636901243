"""Per-GPU overlays of the committed tables: the corrections another card's own grid benchmark makes to them.

The committed tables (kernels/tables/sm90_*.json) are tuned on the H200. Another sm90 card runs the same kernels at
other relative speeds (the H100: the same 132 SMs, 3.35 against 4.8 TB/s) and, more, ranks cuBLASLt's heuristic list
its own way, so a `cublaslt` entry's algo_index need not name the same algorithm there (session 38: 73 of the 87 graph
choices the H100 corrects were cuBLASLt ranks). A grid benchmark of the committed tables on that card corrects them as
tuner.confirm does on the H200: an arm the run timed at <= 97% of the table choice's time takes the entry's role
(kernel-only time: its graph choice; per call: its eager choice). What changes is that card's overlay,
kernels/tables/gpus/<slug>/sm90_<acc>.json, holding only the changed entries; the dispatcher lays it over the
committed tables on that card alone (kernels.tuned_tables.load_default_tables). Entries whose choice changed since
the run are left alone (tuner.confirm: changed_since_benchmark), so an overlay never undoes a later retuning, and a
CPU test fails when a table change would change an overlay (tests/tuner/test_gpu_overlays.py).

    python -m tuner.gpu_overlays              # rewrite every overlay from the runs in OVERLAYS
    python -m tuner.gpu_overlays --check      # exit 1 where a written overlay differs from what the runs give
    python -m tuner.gpu_overlays --merged DIR --gpu "NVIDIA H100 80GB HBM3"   # the tables that card runs, whole
                                              # (DIR/sm90_<acc>.json: an A/B's candidate, a grid's measured table)

A later grid on the card measures the tables with its overlay on: list it after the runs before it (each run confirms
the table as the runs before it corrected it), with the merged table it measured. An A/B of the card's tables
(`ABRevert`) goes among the runs too, after those whose overlay it measured as its candidate: an entry whose choice
there ran slower than the base's in both roles takes the base's back (tuner.ab_revert). It is the way back for an
entry the runs cannot correct: one whose committed choice changed since the card's runs, which they leave alone.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, replace
from pathlib import Path

from kernels import tuned_tables
from tuner import ab_revert, confirm, floor_recheck
from tuner.results import read_json

REPO = Path(__file__).resolve().parents[1]

# card name (torch.cuda.get_device_name) -> accumulator -> its grid runs of the committed tables, one per B layout:
# (results, the table the run measured). Session 38: the f32 grids on an H100 SXM, both layouts, tables of 4e11453
# (row 913 of 1000 shapes before its deadline, col all 1000). Session 40: the same card's f32 grids of ba342d8 (the
# tables with the cuBLASLt identities, the overlay of session 39 on; all 1000 shapes each), its f16 row grid (976), and
# an f16 col grid of d2367ab (321 shapes; the f16 overlay of the row grid on). Session 42: the f16 col grid of 69bf10e,
# all 1000 shapes, both overlays of session 40 on; its call 4 the same grid again, the f16 overlay grown by call 2 on.
# Session 43: the f32 grids of f36a0ac, both layouts, all 1000 shapes (the overlays of session 42 on), and its f16
# row grid (605 shapes before its deadline). Session 45: the f16 row grid of d607010 (606 shapes before its deadline;
# the late rounds' tables, the overlays rebuilt over them on). Session 46: the grids of 858646b (those overlays, the
# f16 one grown by session 45's row grid): f16 row and f32 col all 1000 shapes, f32 row 772 before its deadline.
# Session 47: the f32 row and f16 col grids of ce9ffd9, all 1000 shapes each. Session 48: sweeps (SWEEPS, below).
# Session 49: the f16 col grid of 0dfb23e (late round 3 on, the overlays rebuilt over it), all 1000 shapes; its 5
# graph changes (2 to cuBLAS, 1 to cuBLASLt, 1 cuBLAS -> cuBLASLt, 1 to an f32 kernel), A/B'd in session 50.
# Session 50: call 1 A/B'd the 11 col entries whose H100 dispatch session 49 changed (its f16 col grid's 5, and 6 f32
# entries where late round 3's H200 picks replaced the overlay's corrections), both roles: 2 f32 entries ran slower
# in both (64x1024x8192 0.962x / 0.963x, 512x128x12288 0.962x / 0.958x) and take the choices of 338b560's tables back
# (ABRevert); the f16 changes held (+1.2% / +1.0%). Then the tables of 6a5e407 (the overlays before that revert) on:
# call 2's split-K sweep over tuner/grids/skinny_long.txt (col, both accumulators), call 3's f32 col grid and
# call 4's f16 row grid, all 1000 shapes each. Session 51: call 1 A/B'd the 5 entries session 50 changed (all faster
# kernel-only in both roles: +2.3% to +11%); then the tables of 244b293 on: call 2's f32 row grid, read with call 3's
# floor recheck of its 5 shapes below 0.97x (3 more rounds each: 2 cuBLASLt -> cuBLAS flips of 8192-scale shapes the
# grid alone made were its one draw), and call 4's f16 col grid, all 1000 shapes each. Session 53: call 1 A/B'd the
# 8 entries session 51 changed (none slower than 0.97x in both roles: 0.984x to 1.067x kernel-only); then the tables
# of 4633489 on: call 2's f32 col grid, call 3's f16 col grid and call 4's f16 row grid, all 1000 shapes each, each
# read with the floor recheck its call ran (3 more rounds of the shapes it put below 0.97x). Session 54: the f32 grids
# of 96d7ce8 (the overlays of session 53 on) against cuBLASLt autotuning (the best of its top-32 heuristic list, timed
# per shape), col then row, all 1000 shapes each (two calls per grid), each read with its floor recheck: the
# autotuner's algorithm is an arm (tuner.confirm), so a shape it ran at <= 97% of ours takes its cuBLASLt choice.
# Its call 5 A/B'd the 62 entries those two grids changed (35 col, 27 row; both roles): +7.1% / +7.0% col, +9.3% /
# +9.8% row kernel-only; one col entry ran slower in both roles (256x2048x4096, 0.960x / 0.942x) and goes back.
# Session 55: the f32 col grid of e99b27d (session 54's overlays on) against cuBLASLt autotuning, read with its floor
# recheck: its autotuner records each kept algorithm's identity, so 5 entries take cuBLASLt algorithms by identity and
# 11 cuBLASLt choices timed again at their index are stamped with theirs (tuner.confirm). A recheck's median is now
# over the algorithm the autotuner kept most often (tuner.floor_recheck), which moves 2 entries of session 54's grids
# (512x2048x8192 row, 2048x128x8192 col); A/B'd in session 57 (+2.4% / +3.0% col, none slower in both roles).
# Session 57: the f32 row grid of 6f2fce0 against cuBLASLt autotuning with its floor recheck (9 entries: 4 picks,
# 5 stamps). Session 58: call 1 A/B'd those 9 (+1.8% / +1.9%, none slower in both roles); then the f16 col grid of
# 538a2ca against cuBLASLt autotuning, all 1000 shapes, with its floor recheck (call 3: 7 col entries; it stamps
# nothing, every cuBLASLt choice of the f16 tables carrying an identity already); its f16 row grid reached 612 shapes
# (call 4) and is filed, not folded in. Session 59: call 1 A/B'd those 7 col entries (+2.4% / +2.6%, none slower in
# both roles); then the f16 row grid of ee99f61 against cuBLASLt autotuning, all 1000 shapes over calls 2-4, with its
# floor recheck (call 4: 10 row entries). Session 60: call 1 A/B'd those 10 (+4.7% / +4.5%, none slower in both
# roles); then the f32 col grid of 0f5d6d5 against cuBLASLt autotuning over calls 2-3, with its floor recheck (30 col
# entries, most of them identity stamps), A/B'd in call 5 (+0.5% / +0.4%, none slower in both roles); its f32 row
# grid reached 435 shapes (call 6) and is filed, not folded in. Session 62: that f32 row run resumed on the same
# tables (7a0acd6) and completed over calls 1-2, read with its floor recheck (27 row entries: 24 graph and 4 eager
# identity stamps, 3 graph choices from cuBLAS to the autotuner's algorithm), A/B'd in call 4 (+0.9% / +0.2%, none
# slower in both roles).
S38 = "benchmarks/h100-2026-12-05-s38"
S40 = "benchmarks/h100-2026-12-05-s40"
S42 = "benchmarks/h100-2026-12-05-s42"
S43 = "benchmarks/h100-2026-12-06-s43"
S45 = "benchmarks/h100-2026-12-06-s45"
S46 = "benchmarks/h100-2026-12-06-s46"
S47 = "benchmarks/h100-2026-12-06-s47"
S48 = "benchmarks/h100-2026-12-06-s48"
S49 = "benchmarks/h100-2026-12-06-s49"
S50 = "benchmarks/h100-2026-12-06-s50"
S51 = "benchmarks/h100-2026-12-06-s51"
S53 = "benchmarks/h100-2026-12-06-s53"
S54 = "benchmarks/h100-2026-12-06-s54"
S55 = "benchmarks/h100-2026-12-06-s55"
S57 = "benchmarks/h100-2026-12-07-s57"
S58 = "benchmarks/h100-2026-12-07-s58"
S59 = "benchmarks/h100-2026-12-07-s59"
S60 = "benchmarks/h100-2026-12-07-s60"
S62 = "benchmarks/h100-2026-12-07-s62"
S65 = "benchmarks/h100-2026-12-07-s65"


def _grid(folder: str, call: str, layout: str, acc: str) -> tuple[str, str]:
    """(results, the table it measured) of a grid filed by tuner.file_grid under folder/call/grid_<layout>/."""
    grid, fmt = f"{folder}/{call}/grid_{layout}", {"f32": "fp32", "f16": "fp16"}[acc]
    return f"{grid}/{fmt}/results.json.gz", f"{grid}/tables/sm90_{acc}.json.gz"


@dataclass(frozen=True)
class ABRevert:
    """An A/B of the card's tables filed under folder (tuner.ab_revert.ab_files: base_tables/ and cand_tables/, the
    merged tables before and after a change; ab_<layout>/ both roles), placed among a card's runs after those whose
    overlay its candidate holds."""
    folder: str
    layouts: tuple[str, ...] = ("col",)

    def apply(self, entries: list[dict], gpu: str, acc: str, repo: Path, margin: float) -> tuple[list[dict], dict]:
        files = ab_revert.ab_files(self.folder, acc, self.layouts)
        runs = [tuple(read_json(repo / path) for path in pair.split(",")) for pair in files["ab"]]
        if cards := {role["meta"].get("gpu") for pair in runs for role in pair} - {gpu}:
            raise ValueError(f"{self.folder}: an A/B of {sorted(map(str, cards))}, not of {gpu!r}")
        entries, reverted = ab_revert.revert(entries, acc, read_json(repo / files["base"]),
                                             read_json(repo / files["candidate"]), runs, margin)
        return entries, {"ab": ab_revert.record_name(repo / files["candidate"]), "b_layout": ",".join(self.layouts),
                         **reverted}


@dataclass(frozen=True)
class Rechecked:
    """A grid (results, the table it measured) whose below-floor shapes a floor recheck timed again with the same
    tables (scripts/floor_recheck.sh: round1..N.json under folder): its corrections read each rechecked shape's
    median over the grid and the rounds (tuner.floor_recheck.rechecked), not the grid's one draw alone. measured: the
    table the rounds ran (tuner.file_grid.measured_table at their commit), filed where they ran at a later commit
    than the grid: they are read only if it equals the grid's own table."""
    grid: tuple[str, str]
    folder: str
    measured: str = ""

    @classmethod
    def filed(cls, folder: str, call: str, layout: str, acc: str) -> "Rechecked":
        """A grid filed by tuner.file_grid with the floor recheck its call ran (s24grid.sh RECHECK=1) beside it."""
        results, measured = _grid(folder, call, layout, acc)
        return cls((results, measured), f"{results.rsplit('/', 1)[0]}/recheck")

    def rounds(self, repo: Path) -> list[dict]:
        paths = sorted((repo / self.folder).glob("round*.json*"))
        if not paths:
            raise ValueError(f"{self.folder}: no floor recheck rounds")
        return [read_json(path) for path in paths]


OverlayRun = tuple[str, str] | ABRevert | Rechecked   # a grid or sweep (results, the table it measured), an A/B's
                                                      # verdicts, or a grid with its floor recheck


OVERLAYS: dict[str, dict[str, tuple[OverlayRun, ...]]] = {
    "NVIDIA H100 80GB HBM3": {
        "f32": (_grid(S38, "call1", "row", "f32"), _grid(S38, "call4", "col", "f32"),
                _grid(S40, "call1", "row", "f32"), _grid(S40, "call2", "col", "f32"),
                _grid(S43, "call1", "row", "f32"), _grid(S43, "call2", "col", "f32"),
                _grid(S46, "call2", "col", "f32"), _grid(S46, "call3", "row", "f32"),
                _grid(S47, "call2", "row", "f32"),
                _grid(S48, "call2", "col", "f32"), _grid(S48, "call5", "row", "f32"),
                ABRevert(f"{S50}/call1"), _grid(S50, "call2", "col", "f32"), _grid(S50, "call3", "col", "f32"),
                Rechecked(_grid(S51, "call2", "row", "f32"), f"{S51}/call3/row_fp32"),
                Rechecked.filed(S53, "call2", "col", "f32"),
                Rechecked.filed(S54, "call2", "col", "f32"), Rechecked.filed(S54, "call4", "row", "f32"),
                ABRevert(f"{S54}/call5", ("col", "row")),
                Rechecked.filed(S55, "call2", "col", "f32"), ABRevert(f"{S57}/call1", ("col", "row")),
                Rechecked.filed(S57, "call3", "row", "f32"), ABRevert(f"{S58}/call1", ("row",)),
                Rechecked.filed(S60, "call3", "col", "f32"), ABRevert(f"{S60}/call5", ("col",)),
                Rechecked.filed(S62, "call2", "row", "f32"), ABRevert(f"{S62}/call4", ("row",))),
        "f16": (_grid(S40, "call3", "row", "f16"), _grid(S40, "call5", "col", "f16"),
                _grid(S42, "call2", "col", "f16"), _grid(S42, "call4", "col", "f16"),
                _grid(S43, "call3", "row", "f16"), _grid(S45, "call2", "row", "f16"),
                _grid(S46, "call2", "row", "f16"), _grid(S47, "call3", "col", "f16"),
                _grid(S48, "call2", "col", "f16"), _grid(S48, "call5", "row", "f16"),
                _grid(S49, "call4", "col", "f16"),
                ABRevert(f"{S50}/call1"), _grid(S50, "call2", "col", "f16"), _grid(S50, "call4", "row", "f16"),
                _grid(S51, "call4", "col", "f16"),
                Rechecked.filed(S53, "call3", "col", "f16"), Rechecked.filed(S53, "call4", "row", "f16"),
                Rechecked.filed(S58, "call3", "col", "f16"), ABRevert(f"{S59}/call1", ("col",)),
                Rechecked.filed(S59, "call4", "row", "f16"), ABRevert(f"{S60}/call1", ("row",)),
                Rechecked(_grid(S65, "call1", "row", "f16"), f"{S65}/call3/row_fp16",
                          f"{S65}/call3/row_fp16/tables/sm90_f16.json.gz"),
                ABRevert(f"{S65}/call3", ("row",))),
    },
}
# Sweeps among those runs: not grids of the tables but the split-K families tuned on the card over the 204 few-tile
# long-K shapes (tuner/grids/long_k_few_tiles.txt; session 48, calls 2 and 5) or over the 90 skinny long-K col
# shapes (tuner/grids/skinny_long.txt; session 50, call 2), each shape's best arm timed beside the tables. An f16
# sweep corrects with its own arms and baselines only: the f32 helpers' arms, put on its scale through torch.matmul,
# flipped 24 small f16 entries near the margin to f32 kernels that session 48's A/B measured at 0.996x / 0.997x (the
# two roles) and 4 to the helpers' cuBLAS / cuBLASLt arms at 0.92x to 1.01x.
SWEEPS = frozenset(results for results, _ in (_grid(S48, "call2", "col", "f16"), _grid(S48, "call5", "row", "f16"),
                                              _grid(S50, "call2", "col", "f16")))
# card -> the f32 runs whose arms its f16 overlay may take (build's f32_runs: the last of each layout). Pinned, not
# the card's latest f32 runs: another f32 measurement of the same arms flips many f16 entries near the margin (session
# 43's f32 grids would change 151 and add 35 of 195), so a new helper set is A/B'd (overlay_ab.sh) before it replaces
# this one. Sessions 40 to 42 built and A/B'd the f16 overlay with session 40's f32 grids.
F16_HELPERS: dict[str, tuple[tuple[str, str], ...]] = {
    "NVIDIA H100 80GB HBM3": (_grid(S40, "call1", "row", "f32"), _grid(S40, "call2", "col", "f32")),
}
# what the overlay's meta takes from its runs' meta (the card and software it was measured with)
RUN_META = ("gpu", "arch", "driver", "cuda", "torch")
# the fallback reasons of a tuned cuBLASLt choice that this card's heuristic list lacks (kernel_error before session 40)
FELL_BACK = ("tuned_elsewhere", "kernel_error")
# what the command prints of each run's round
ROUND_SUMMARY = ("ab", "b_layout", "graph", "eager", "ran_cublas", "changed_since_benchmark")


def _key(entry: dict) -> tuple:
    return entry["m"], entry["n"], entry["k"], entry["b_layout"]


def ran_instead(entries: list[dict], run: confirm.Run, f32_run: confirm.Run | None = None) -> tuple[list[dict], int]:
    """The entries with each cuBLASLt choice that this card could not run replaced by the cuBLAS arm that ran in its
    place, and how many roles changed. A tuned cuBLASLt algorithm absent from the card's heuristic list (its identity,
    `config.algo`) falls back to cuBLAS (`tuned_elsewhere`; `kernel_error` and a quarantine until session 40, whose
    H100 grids show it on 10 row / 22 col f32 shapes); in the overlay the card dispatches that cuBLAS arm directly.
    Its time is the run's cuBLAS baseline (the same arm); for an f16 run the fallback accumulates in fp32
    (`kernels.dispatch.FALLBACK_F16_ACC`), so it is the f32 run's cuBLAS baseline on the f16 run's scale
    (tuner.confirm.candidates), and without `f32_run` the entry is left to fall back. Only entries still as the run
    measured them, as in tuner.confirm."""
    from kernels.dispatch import FALLBACK_F16_ACC   # here, not at import: kernels.dispatch imports torch

    cublas = f"cuBLAS-{confirm.LAYOUT_SUFFIX[run.b_layout]}"
    run_acc = FALLBACK_F16_ACC if run.acc == "f16" else run.acc
    arm = confirm.baseline_arm(cublas, {}, run.b_layout)
    if run_acc != run.acc:
        arm["acc"] = run_acc
    out, changed = [], 0
    for entry in entries:
        key = _key(entry)
        mnk = "_".join(map(str, key[:3]))
        competitors = (run.results.get(mnk) or {}) if key[3] == run.b_layout else {}
        info = (competitors.get("ours") or {}).get("info") or {}
        if run_acc == run.acc:
            baseline = competitors.get(cublas) or {}
            timed = baseline.get("kernel_us") if baseline.get("ok") else None
        else:
            reference = competitors.get(confirm.REFERENCE) or {}
            found = [times["kernel"] for times, other in (confirm.candidates(mnk, "graph", f32_run, reference)
                                                          if f32_run is not None and reference.get("ok") else [])
                     if other == arm and "kernel" in times]
            timed = found[0] if found else None
        measured = run.table.get(key)
        picks = {}
        for role, ran in (("eager", info.get("kernel") if info.get("fallback") in FELL_BACK else None),
                          ("graph", info.get("graph_kernel"))):
            if (ran == "cublas" and timed and measured is not None
                    and confirm.choice(entry, role)["kernel"] == "cublaslt"
                    and confirm.choice(measured, role) == confirm.choice(entry, role)):
                picks[role] = dict(arm, us=timed)
        changed += len(picks)
        out.append(confirm.with_picks(entry, run.acc, picks))
    return out, changed


def _load(gpu: str, acc: str, results: str, measured: str, repo: Path, kernel_only: bool = False) -> confirm.Run:
    run = confirm.Run.load(acc, repo / results, repo / measured, kernel_only)
    if run.meta.get("gpu") != gpu or run.meta.get("acc", acc) != acc:
        raise ValueError(f"{results}: a run of {run.meta.get('gpu')!r} ({run.meta.get('acc')}), not of {gpu!r} ({acc})")
    return run


def load_run(gpu: str, acc: str, spec: tuple[str, str] | Rechecked, repo: Path = REPO) -> tuple[str, confirm.Run]:
    """(its results path, the run) of a grid or sweep among a card's runs; a Rechecked grid with its rounds' medians."""
    results, measured = spec.grid if isinstance(spec, Rechecked) else spec
    run = _load(gpu, acc, results, measured, repo)
    if isinstance(spec, Rechecked):
        if spec.measured and read_json(repo / spec.measured) != read_json(repo / measured):
            raise ValueError(f"{spec.folder}: its rounds ran other tables ({spec.measured}) than the grid ({measured})")
        again = floor_recheck.rechecked(read_json(repo / results), spec.rounds(repo), same_tables=bool(spec.measured))
        run = replace(run, results={s["mnk"]: s["competitors"] for s in again["shapes"]})
    return results, run


def build(gpu: str, acc: str, runs: tuple[OverlayRun, ...], base: dict, margin: float = confirm.MARGIN,
          repo: Path = REPO, f32_runs: tuple[tuple[str, str], ...] = ()) -> dict:
    """The overlay table (meta and the changed entries) of `base` (a table's JSON object) on `gpu` from its runs.
    f32_runs (f16 only): the card's f32 runs, whose arms an f16 entry may also take (fp32 accumulation is more
    precise; tuner.confirm puts their times on the f16 run's scale through torch.matmul): the last one of each layout,
    its kernel-only figures only. Per call, one run's figures put on another's scale move by more than the 3% margin
    on small shapes (the H100's f16 row grid: 159 eager choices would flip to the f32 twin of the same kernel)."""
    entries, rounds, run_meta = base["entries"], [], {}
    helpers = {}
    for results, measured in f32_runs if acc == "f16" else ():
        helper = _load(gpu, "f32", results, measured, repo, kernel_only=True)
        helpers[helper.b_layout] = helper
    for spec in runs:
        if isinstance(spec, ABRevert):
            entries, record = spec.apply(entries, gpu, acc, repo, margin)
            rounds.append(record)
            continue
        results, run = load_run(gpu, acc, spec, repo)
        meta = run.meta
        run_meta = run_meta or {k: str(meta[k]) for k in RUN_META if k in meta}
        f32_arms = [helpers[run.b_layout]] if run.b_layout in helpers and results not in SWEEPS else []
        entries, counts = confirm.confirm(entries, acc, [run, *f32_arms], margin)
        entries, fell_back = ran_instead(entries, run, helpers.get(run.b_layout))   # after: a faster arm stays
        rounds.append({"results": results, **({"rechecked": spec.folder} if isinstance(spec, Rechecked) else {}),
                       "b_layout": run.b_layout, "date": meta.get("date", ""), "commit": meta.get("commit", ""),
                       **counts, **({"ran_cublas": fell_back} if fell_back else {})})
    before = {_key(e): e for e in base["entries"]}
    changed = [e for e in entries if before.get(_key(e)) != e]
    meta = {"arch": base["meta"]["arch"], "acc": acc, **run_meta, "gpu": gpu,
            **{key: next(r[key] for r in rounds if key in r) for key in ("date", "commit")},
            "overlay_of": {"gpu": base["meta"]["gpu"], "commit": base["meta"]["commit"]},
            "margin": margin, "confirmed": rounds}
    for key in tuned_tables.META_STRINGS:
        meta.setdefault(key, "")
    return {"meta": meta, "entries": changed}


def overlay_path(gpu: str, acc: str, tables: Path = tuned_tables.TABLES_DIR) -> Path:
    return tuned_tables.gpu_overlay_dir(gpu, tables) / f"sm90_{acc}.json"


def render(data: dict) -> str:
    tuned_tables.dump_table(data["meta"], data["entries"])   # validates, as every table the dispatcher loads
    return json.dumps(data, indent=1) + "\n"


def merged(gpu: str, acc: str, tables: Path = tuned_tables.TABLES_DIR) -> dict | None:
    """The table of `acc` a dispatcher on `gpu` runs (its overlay's entries in place of the committed ones), as JSON;
    None when there is no committed table of `acc`."""
    if not (tables / f"sm90_{acc}.json").is_file():
        return None
    base = read_json(tables / f"sm90_{acc}.json")
    path = overlay_path(gpu, acc, tables)
    if not path.is_file():
        return base
    over = {_key(e): e for e in read_json(path)["entries"]}
    entries = [over.pop(_key(e), e) for e in base["entries"]] + list(over.values())
    return {"meta": {**base["meta"], "overlays": [str(path.relative_to(tables))]}, "entries": entries}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", type=Path, default=tuned_tables.TABLES_DIR,
                   help="the tables the overlays lie over, and where they are written (default: the committed ones)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if an overlay differs")
    p.add_argument("--merged", type=Path, metavar="DIR", help="write the tables --gpu runs, whole, into DIR instead")
    p.add_argument("--gpu", help="with --merged: the card (torch.cuda.get_device_name)")
    args = p.parse_args(argv)
    if args.merged is not None:
        if not args.gpu:
            p.error("--merged needs --gpu")
        args.merged.mkdir(parents=True, exist_ok=True)
        for acc in tuned_tables.ACCS:
            if (data := merged(args.gpu, acc, args.tables)) is not None:
                (args.merged / f"sm90_{acc}.json").write_text(render(data))
                print(json.dumps({"table": str(args.merged / f"sm90_{acc}.json"), "entries": len(data["entries"]),
                                  "overlays": data["meta"].get("overlays", [])}))
        return 0
    stale = []
    for gpu, by_acc in OVERLAYS.items():
        for acc, runs in by_acc.items():
            base = read_json(args.tables / f"sm90_{acc}.json")
            data = build(gpu, acc, runs, base, f32_runs=F16_HELPERS.get(gpu, by_acc.get("f32", ())))
            text, path = render(data), overlay_path(gpu, acc, args.tables)
            summary = {"overlay": str(path), "entries": len(data["entries"]),
                       "rounds": [{k: r[k] for k in ROUND_SUMMARY if k in r} for r in data["meta"]["confirmed"]]}
            if args.check:
                if not path.is_file() or path.read_text() != text:
                    stale.append(str(path))
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(json.dumps(summary))
    if stale:
        print(f"stale overlays (rebuild: python -m tuner.gpu_overlays): {', '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
