"""How the committed tables in kernels/tables/ are made from the tuning records under benchmarks/: the one retable
command per accumulator, kept as data so that `python -m tuner.committed_tables` rebuilds them and a CPU test checks
that they still rebuild byte for byte (a hand edit, or a record moved, fails CI rather than going unnoticed).

    python -m tuner.committed_tables                     # rewrite kernels/tables/sm90_{f32,f16}.json
    python -m tuner.committed_tables --out-dir /tmp/t    # build elsewhere (meta taken from the committed files)
    python -m tuner.committed_tables --confirm-rounds 1 --out-dir /tmp/t1   # only the first round of corrections
    python -m tuner.committed_tables --confirm-row-rounds 1 --out-dir /tmp/r1   # the row entries' first round too
    python -m tuner.committed_tables --no-ab-reverts --out-dir /tmp/c   # what the last A/B measured as its candidate
    python -m tuner.committed_tables --no-prefetch-twins --out-dir /tmp/p   # graph choices without the L2 prefetch
    python -m tuner.committed_tables --late-rounds 0 --out-dir /tmp/l   # without the late rounds (on since s44)
"""
from __future__ import annotations

import argparse
from pathlib import Path

from kernels.space import L2_PREFETCH_CAP_KB
from tuner.ab_revert import ab_files

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "kernels" / "tables"

# Tuning runs merged in this order (the first is the base): sessions 3 and 2 (the grid), 5 (PDL twins), 6 (34 more
# twins), 7 (pdl_mid on 1e9-1e11 FLOP), 13 (the splitk variants alone over the long-K shapes with few output tiles,
# both layouts), 14 (the splitk cluster variants alone over the same shapes, two runs: the deep and the shallow
# pipelines). Each folder holds finished_<acc>_<layout>.jsonl(.gz).
SPLITK = "benchmarks/h200-2026-12-02-s13/tune_splitk"
SPLITK_CLUSTER = ("benchmarks/h200-2026-12-02-s14/tune_cluster_c1", "benchmarks/h200-2026-12-02-s14/tune_cluster_c2")
RECORDS = ("benchmarks/h200-2026-11-30-s3/tune", "benchmarks/h200-2026-11-30-s2/tune",
           "benchmarks/h200-2026-12-01-s5/tune_pdl", "benchmarks/h200-2026-12-01-s6/tune_pdl34",
           "benchmarks/h200-2026-12-01-s7/tune_pdl_mid", SPLITK, *SPLITK_CLUSTER)
# B row-major (x @ W) entries: tuned over the row twins of what the col tables run (variant set tables_row), the same
# objectives; written after the col entries and their corrections. The base run is session 10's, resumed in session
# 12 for the largest 83 f32 / 102 f16 shapes it had not reached (committed apart: "A+B" is one run in parts); then
# session 12's sweep of every cuBLASLt rank over the 10-100 us shapes where session 10 had timed only some.
ROW_RECORDS: tuple[str, ...] = (
    "benchmarks/h200-2026-12-01-s10/tune_row+benchmarks/h200-2026-12-01-s12/tune_row_rest",
    "benchmarks/h200-2026-12-01-s12/sweep_row", SPLITK, *SPLITK_CLUSTER)
# Eager calls: host + kernel time (tuner/objective.py HOST_US_H200), PDL twins costed as lone calls, PDL-only variants
# (splitk) at 1.6x their back-to-back time, never below 0.8x of the best kernel; calls captured into a CUDA graph:
# kernel time alone (docs/dispatch.md). The factor and cuBLAS's 20 µs per call are on since session 16's A/B. Past the
# host-bound gate, the least kernel + host time among the kernels within 3% of the fastest (--mid-floor 0.97): on since
# session 17's A/B (per call +5-19% in both roles, every accumulator and layout; kernel-only unchanged).
# The loop guard (an arm past the kernel floor is eligible when a loop of its calls runs no slower than one of the
# fastest kernel's: max(host, kernel) per call) is on since session 22's A/B (call 2, 60 sampled changed entries per
# accumulator and layout, both roles: per call +14.4% / +5.0% f32 col, +27.2% / +9.2% f16 col, +13.2% / +12.9% f32
# row, +9.6% / +5.8% f16 row; kernel-only +0.03-0.16%): the floor had left host-bound shapes on cuBLAS whose lone
# calls cost ~10 µs more than on a kernel of ours (session 21's grids).
COMMON = ("--objective", "call", "--lone-pdl", "--pdl-alone-factor", "1.6", "--kernel-floor", "0.8",
          "--mid-floor", "0.97", "--loop-guard", "--graph-objective", "kernel")
# f16 may take a faster fp32-accumulating choice (more precise, so always allowed); above 1e11 FLOP unless its own
# is >= 3% faster (measured in session 8: +6% kernel-only on those shapes, both roles).
EXTRA = {"f32": (), "f16": ("--borrow-f32", "--borrow-large", "1e11=0.97")}
# Then the benchmark's corrections (tuner/confirm.py), round by round: each round is a grid benchmark of the tables of
# the round before, per accumulator its runs as (accumulator, results, the table that run measured). Round 1 (session
# 8's grid) is on since the A/B of session 9 (both roles agreed, +6-7% kernel-only on the changed entries). Round 2
# (session 9's grid of the round-1 tables) is on since the A/B of session 10 (both roles: +1.1% / +1.3% kernel-only on
# the 21 changed f32 entries, +1.0% / +0.9% on the 53 f16 ones; per call within the dispatchers' offset).
GRID8 = "benchmarks/h200-2026-12-01-s8/grid"
GRID9 = "benchmarks/h200-2026-12-01-s9/grid_confirmed"
# Round 3: session 15's col grid (call 3: a shuffled 394 f32 / 399 f16 shapes of the tables of 081ac8e); on since
# session 16's A/B (call 2, together with the eager cost changes: kernel-only +0.2-0.4% on the sampled col entries).
GRID15 = "benchmarks/h200-2026-12-02-s15/call3/grid_col"
# Round 4: session 19's col twin sweep (call 2, `tuner.twin_sweep --layout col`): per col shape, the col twins of its
# row entry's choices beside the tables' choice (510 f32 / 684 f16 shapes listed, most of them reached before the
# deadline); on since that session's A/B (call 3, both roles: +9.1% / +3.2% kernel-only on the 6 changed f32 entries,
# +4.0% / +4.2% on the 18 f16 ones).
S18, S19 = "benchmarks/h200-2026-12-03-s18", "benchmarks/h200-2026-12-03-s19"
GRID19_COL_SWEEP = f"{S19}/call2/sweep_col"
# Round 5: session 17's col grid (call 3: a shuffled 300 f32 / 317 f16 shapes of that session's tables), measured
# before round 4 changed 24 entries (those it skips); on since session 20's A/B (call 1, both roles, with row rounds
# 7-8: 43 f16 col entries, kernel-only 0.999x / 1.000x, per call +2.1% / -4.0%, within the dispatchers' offset).
GRID17_COL = "benchmarks/h200-2026-12-02-s17/call3/grid_col"
# Round 6: session 20's col grid (call 3: a shuffled 662 f32 / 691 f16 shapes of c427508's tables), measured before
# round 5 changed 41 f16 entries (those it skips); on since session 21's A/B (call 1, both roles, with row round 9:
# 76 f16 col entries, 74 of them eager, kernel-only +0.2% / +0.2%, per call +0.5% / -3.7%, within the dispatchers'
# offset; no f32 entry changed).
S20 = "benchmarks/h200-2026-12-03-s20"
GRID20_COL = f"{S20}/call3/grid_col"


def _grid_round(grid: str, accs: tuple[str, ...] = ("f32", "f16")) -> dict:
    """One round of corrections from a grid run's folder: per accumulator its runs as (accumulator, results, the
    table that run measured); the f16 table may also take the f32 run's fp32-accumulating arms. accs: the
    accumulators the folder ran (an accumulator with no run has no round)."""
    runs = {acc: (acc, f"{grid}/fp{acc[1:]}/results.json.gz", f"{grid}/tables/sm90_{acc}.json.gz") for acc in accs}
    takes = {acc: tuple(runs[a] for a in sources if a in runs) for acc, sources in (("f32", ("f32",)),
                                                                                     ("f16", ("f16", "f32")))}
    return {acc: own for acc, own in takes.items() if own}


# Round 7: session 25's col grids beside cuBLASLt
# autotuning (a shuffled 511 f32 / 497 f16 shapes of the committed tables of 9f88034), whose autotuned algorithm
# (`algo_index`) is an arm. Session 25 timed `ours` by events on 4 f32 / 29 f16 of those shapes (the capture fault
# fixed in session 26): those shapes' graph choices are left alone (tuner.results.graph_timed). On since session 27's
# A/B (call 1, with row round 10, both roles: the 1 f32 entry +10% / +12% kernel-only; 12 f16 entries, mostly eager,
# +0.2% / +0.3% kernel-only, per call -5% / -1.4%, which the A/B's reverts take back where both roles agree).
S25, S26 = "benchmarks/h200-2026-12-04-s25", "benchmarks/h200-2026-12-04-s26"
GRID25_COL = f"{S25}/grid_col"
CONFIRM_ROUNDS = tuple(_grid_round(grid) for grid in (GRID8, GRID9, GRID15, GRID19_COL_SWEEP, GRID17_COL,
                                                       GRID20_COL, GRID25_COL))
CONFIRM_ROUNDS_BY_DEFAULT = 7
# The same for the B row-major entries, from `--b_layout row` grid runs (their NN baselines are the row arms). Round 1:
# session 11's row grid (a shuffled 381 f32 / 389 f16 shapes of the session-10 row entries); on since the A/B of
# session 12 (both roles, B row-major: +5.7% / +5.9% kernel-only on the 44 changed f32 entries, +3.0% / +3.2% on the
# 77 f16 ones; per call +9.5% / -0.9% and +6.2% / +0.1%, within the dispatchers' offset).
# Round 2: session 12's row grid (call 4: a shuffled 386 f32 / 382 f16 shapes of the completed row tables); on since
# that session's A/B (call 6, both roles: +4.6% / +5.1% kernel-only on the 13 changed f32 entries, +1.6% / +1.6% on
# the 30 f16 ones; per call +13% / +1.0% and +9.2% / +1.0%).
GRID11_ROW = "benchmarks/h200-2026-12-01-s11/call2_grid_row"
GRID12_ROW = "benchmarks/h200-2026-12-01-s12/call4_grid_row"
# Round 3: session 15's row grid (call 2: a shuffled 437 f32 / 418 f16 shapes of the tables of 081ac8e, with the
# splitk and splitk cluster entries); on since that session's A/B (call 3, both roles: +2.7% / +2.2% kernel-only on
# the 11 changed f32 entries, +1.3% / +1.4% on 34 f16 ones, 30 of them changed; per call +2.7% / -8.1% and +7.0% /
# -4.6%, within the dispatchers' offset).
GRID15_ROW = "benchmarks/h200-2026-12-02-s15/call2/grid_row"
# Round 4: session 18's twin sweep (tuner/twin_sweep.py, call 2): per row shape of 1e9-1e11 FLOP whose entry ran
# cuBLAS / cuBLASLt, the row twins of its col entry's choices timed beside the tables' choice (`ours:<twin>` arms).
GRID18_SWEEP = "benchmarks/h200-2026-12-03-s18/call2/sweep"
# Round 5: session 18's second sweep (call 4) of the tables with round 4 on: every row shape of 1e9-1e11 FLOP whose
# entry does not run its col choice's row twin (not only the cuBLAS ones); on since session 19's A/B (call 1, both
# roles: +9.2% / +9.5% kernel-only on the 92 changed f32 entries, +8.7% / +8.7% on the 110 f16 ones).
GRID18_SWEEP_ALL = "benchmarks/h200-2026-12-03-s18/call4/sweep"
# Round 6 (f16 only): the 64 f16 shapes of round 5 whose twins all accumulate in fp32, which that f16 run skipped;
# session 19 (call 1) swept them on round 5's tables: 3 entries change, +1.6% / +1.9% kernel-only in its A/B.
GRID19_F16_TWINS = f"{S19}/call1/sweep6"
# Round 7: session 18's row grid (call 3: a shuffled 628 f32 / 621 f16 shapes of the tables with round 4 on; entries
# rounds 5-6 changed since are skipped). Round 8: session 19's row grid sample (call 4: the first 221 f32 / 216 f16
# of the same order, tables with rounds 5-6 on). On since session 20's A/B (call 1, both roles: 1 f32 entry,
# 2048x64x16384, whose new graph choice, cuBLAS NN, ran 6% slower and went back; 35 f16 entries +0.6% / +1.0%
# kernel-only, 12288x16384x12288 / x16384 on fp32-accumulating arms +7-10%).
GRID18_ROW = f"{S18}/call3/grid_row"
GRID19_ROW = f"{S19}/call4/grid_row"
# Round 9: session 20's row grid (call 2: a shuffled 680 f32 / 686 f16 shapes of c427508's tables; entries rounds 7-8
# changed since are skipped); on since session 21's A/B (call 1, both roles: 35 f16 entries, 34 of them eager,
# kernel-only +0.3% / +0.4%, per call +4.3% / -4.0%).
GRID20_ROW = f"{S20}/call2/grid_row"
ROW_CONFIRM_ROUNDS = tuple(_grid_round(grid) for grid in (GRID11_ROW, GRID12_ROW, GRID15_ROW, GRID18_SWEEP,
                                                          GRID18_SWEEP_ALL)) + (_grid_round(GRID19_F16_TWINS, ("f16",)),
                                                                                _grid_round(GRID18_ROW),
                                                                                _grid_round(GRID19_ROW),
                                                                                _grid_round(GRID20_ROW))
# Round 10: beside cuBLASLt autotuning NN, f32 from session 26's row grid (823 shapes,
# every competitor graph-timed), f16 from session 25's (499 shapes, `ours` event-timed on 18) plus session 26's f32
# run for its fp32-accumulating arms; both measured the committed tables of 9f88034. On since session 27's A/B (call
# 1, both roles: 14 f32 entries +4.6% / +4.4% kernel-only; 46 f16 entries +0.1% / +0.2%, per call -0.1% / +0.3%).
GRID26_ROW_F32 = ("f32", f"{S26}/call11/grid_row/fp32/results.json.gz", f"{S26}/call11/grid_row/tables/sm90_f32.json.gz")
GRID25_ROW_F16 = ("f16", f"{S25}/grid_row/fp16/results.json.gz", f"{S25}/grid_row/tables/sm90_f16.json.gz")
ROW_CONFIRM_ROUNDS += ({"f32": (GRID26_ROW_F32,), "f16": (GRID25_ROW_F16, GRID26_ROW_F32)},)
ROW_CONFIRM_ROUNDS_BY_DEFAULT = 10
# Last, the A/Bs' own verdicts (tuner/ab_revert.py): an entry whose new graph choice ran slower than the one it
# replaced, by >= 3% in both roles, takes the old one back. Session 13's A/B of the splitk records: 1 entry
# (128x64x2048 f32 col, 0.94x in both roles). Session 14's A/B of the splitk cluster records: see its call3 folder.
# Session 15's A/B of the row corrections' round 3 (call 3) ran B row-major only: the round changed no col entry.
# Session 16's A/B (call 2: the eager cost changes and col round 3) measured 70 sampled entries per accumulator and
# layout; the entries it did not sample keep the candidate's choice.
# Session 17's A/Bs: call 2 measured every entry the tables of session 16 ran unmeasured (against session 16's A/B base,
# both layouts); "ab_mid" is the --mid-floor 0.97 candidate against those tables (col from call 2, row from call 1).
S16_AB, S17 = "benchmarks/h200-2026-12-02-s16/call2", "benchmarks/h200-2026-12-02-s17"
AB_REVERTS = tuple({acc: ab_files(folder, acc, *args) for acc in ("f32", "f16")}
                   for folder, *args in (("benchmarks/h200-2026-12-02-s13/call3",),
                                         ("benchmarks/h200-2026-12-02-s14/call3",),
                                         ("benchmarks/h200-2026-12-02-s15/call3", ("row",)),
                                         (S16_AB,),
                                         (f"{S17}/call2", ("col", "row"), f"{S16_AB}/base_tables"),
                                         (f"{S17}/ab_mid", ("col", "row"), f"{S17}/call2/cand_tables")))
# Session 18: call 2's A/B measured round 4 with the f16 sweep alone; the committed build also lets f16 take the f32
# sweep's fp32-accumulating arms (_grid_round), which changed 42 f16 row entries more: call 3 measured those against
# call 2's candidate (f16 only; the A/B's candidate is the tables its row grid measured).
AB_REVERTS += ({"f16": ab_files(f"{S18}/call3", "f16", ("row",), f"{S18}/call2/cand_tables",
                                f"{S18}/call3/grid_row/tables")},)
# Session 19: call 1's A/B of row round 5 (base: the committed tables before it) and of round 6 (f16, against round
# 5's tables); call 3's of col round 4 (against the same base); call 4's of the 30 f16 col entries where the committed
# build (f16 also taking the f32 col sweep's fp32-accumulating arms) differs from call 3's candidate.
AB_REVERTS += ({acc: ab_files(f"{S19}/call1", acc, ("row",)) for acc in ("f32", "f16")},
               {"f16": ab_files(f"{S19}/call1/ab6", "f16", ("row",), f"{S19}/call1/cand_tables",
                                f"{S19}/call1/cand6")},
               {acc: ab_files(f"{S19}/call3", acc, ("col",), f"{S19}/call1/base_tables") for acc in ("f32", "f16")},
               {"f16": ab_files(f"{S19}/call4", "f16", ("col",), f"{S19}/call3/cand_tables",
                                f"{S19}/call4/grid_row/tables")})
# Session 20: call 1's A/B of col round 5 and row rounds 7-8 (base: the committed tables before them).
AB_REVERTS += ({"f32": ab_files(f"{S20}/call1", "f32", ("row",)),
                "f16": ab_files(f"{S20}/call1", "f16", ("col", "row"))},)
# Session 21: call 1's A/B of col round 6 and row round 9 (f16 only: no f32 entry changed).
S21 = "benchmarks/h200-2026-12-03-s21"
AB_REVERTS += ({"f16": ab_files(f"{S21}/call1", "f16", ("col", "row"))},)
# Session 22: call 2's A/B of the loop guard (base: the committed tables before it), both layouts.
S22 = "benchmarks/h200-2026-12-03-s22"
AB_REVERTS += ({acc: ab_files(f"{S22}/call2", acc) for acc in ("f32", "f16")},)
# Session 27: call 1's A/B of col round 7 and row round 10 (base: the committed tables of 1ba7352), both layouts.
AB_REVERTS += ({acc: ab_files("benchmarks/h200-2026-12-04-s27/call1", acc) for acc in ("f32", "f16")},)


# Last, the graph choices move to their l2_prefetch twins where the prefetch pays (tuner/prefetch_twins.py). Col sm90:
# since session 30's A/B (call 2, 100 of the 306 f32 / 315 f16 changed entries, none of them among call 1's shapes the
# rule was read from; both roles: kernel-only +6.0% / +6.2% f32, +6.1% / +6.1% f16; per call within the dispatchers'
# offset, the eager choices unchanged). Row sm90 and splitk (both layouts): since session 32's A/B
# (benchmarks/h200-2026-12-04-s31/ calls 1-2, both roles: row sm90 +8.4% f32 / +5.8% f16 on 80 shapes each; splitk
# under its own rule, read from the same runs, 1.106x col / 1.090x row on the 71 / 36 shapes it keeps).
PREFETCH_TWIN_LAYOUTS = ("col", "row")
PREFETCH_TWIN_FAMILIES = ("sm90", "splitk")
# Then the graph choices the rule leaves move to their capped twins (at most L2_PREFETCH_CAP_KB per CTA; the rule
# counts what they prefetch), one family at a time. Col sm90: session 32's call 3, 100 of the 164 f32 / 216 f16 such
# entries, both roles: +2.4% / +2.0% kernel-only (0.979x at worst). Row sm90 and splitk (both layouts): session 36's
# call 1 (benchmarks/h200-2026-12-05-s36/, both roles within 0.1-0.3%): row sm90 +2.3% f32 / +2.0% f16 on 80 sampled
# of 173 / 224; splitk where the capped twin's grid prefetches <= 4 MiB +2.5% / +2.2% col (28 / 38 shapes), +1.2% /
# +1.3% row (32 / 36), and 0.93-0.95x on the 2 / 6 / 2 / 2 it leaves (~8 MiB), as the rule predicts.
PREFETCH_CAPPED = {"col": ("sm90", "splitk"), "row": ("sm90", "splitk")}
# Last, each cuBLASLt choice's identity (tuner/lt_identity.py), from a record made on the H200 with the cuBLAS the
# tables were tuned with (`python -m tuner.lt_identity record`): then a dispatcher elsewhere runs the algorithm that
# was timed, wherever its own list ranks it. Recorded in session 39 (call 1, before anything else ran on the card).
# Stamping changed every cuBLASLt choice, so the GPU overlays' cuBLASLt corrections drop out, to be measured again.
LT_IDENTITIES: str | None = "benchmarks/h200-2026-12-05-s39/call1/lt_identities_h200.json"


# Late rounds: corrections from grids of the finished tables (every step above but the identities' stamps, which
# change nothing on the H200 they were recorded on), applied after those steps, where each entry is what the grid
# measured (a round among CONFIRM_ROUNDS runs before the A/B reverts and the twins, so it would find most of such a
# grid's entries "changed since the benchmark"). Per round, one B layout: session 39's grids of the tables of
# f550313, every competitor graph-timed; on since session 44's A/B on the H200 (benchmarks/h200-2026-12-06-s44/call3,
# both roles, the 13 entries they move: kernel-only +7.7% / +7.7% f16 col (9), +3.9% / +3.9% f16 row (3), +1.1% /
# +1.3% f32 row (1), every shape faster; per call 0.99x / 1.00x, within spread). The f16 table takes the f32 run's
# fp32-accumulating arms by their kernel-only figures only ("f32:kernel": another run's per-call figures put on this
# run's scale are noise at a 3% margin; docs/notes.md, session 40).
def _late_round(f32_grid: str, f16_grid: str) -> dict:
    f32 = ("f32", f"{f32_grid}/fp32/results.json.gz", f"{f32_grid}/tables/sm90_f32.json.gz")
    return {"f32": (f32,), "f16": (("f16", f"{f16_grid}/fp16/results.json.gz", f"{f16_grid}/tables/sm90_f16.json.gz"),
                                   ("f32:kernel", *f32[1:]))}


S39 = "benchmarks/h200-2026-12-05-s39"
S44 = "benchmarks/h200-2026-12-06-s44"
LATE_ROUNDS = (_late_round(f"{S39}/call2/grid_col", f"{S39}/call3/grid_col"),
               _late_round(f"{S39}/call1/grid_row", f"{S39}/call3/grid_row"),
               # Round 3: session 44's split-K sweep over the 204 few-tile long-K col shapes
               # (tuner/grids/long_k_few_tiles.txt), each shape's best tuned split-K arm (`ours:NAME@sS`)
               # kernel-timed beside the tables of b6c84f9 in one interleaved run per accumulator; >= 3% faster than
               # the table's graph choice on 13 f32 / 4 f16 shapes there. On since session 49's A/B on the H200
               # (benchmarks/h200-2026-12-06-s49/call1, both roles): kernel-only f32 +8.8% / +8.9%, f16 +2.0% /
               # +1.9%; per call within spread (f32 1.00x / 1.00x, f16 0.98x / 1.00x).
               _late_round(f"{S44}/call5/eval_col", f"{S44}/call5/eval_col"))
LATE_ROUNDS_BY_DEFAULT = 3
# A late round's own A/B verdicts (tuner/ab_revert.py, as AB_REVERTS), applied right after that round (its number).
# Round 3's A/B (session 49, call 1: base the tables of 338b560, candidate the round-3 build): 2 of its 17 entries
# ran slower in both roles, 64x512x12288 f32 (0.956x / 0.958x) and 64x512x16384 f16 (0.949x / 0.948x).
S49 = "benchmarks/h200-2026-12-06-s49"
LATE_AB_REVERTS = {3: ({acc: ab_files(f"{S49}/call1", acc, ("col",)) for acc in ("f32", "f16")},)}


def table_path(acc: str, directory: Path = TABLES) -> Path:
    return Path(directory) / f"sm90_{acc}.json"


def state_args(records: tuple[str, ...]) -> list[str]:
    """--state arguments for retable: each record folder (or "A+B" run in parts) under the repo."""
    return [arg for record in records
            for arg in ("--state", "+".join(str(REPO / part) for part in record.split("+")))]


def retable_argv(acc: str, out_dir: Path = TABLES, extra: tuple[str, ...] = ()) -> list[str]:
    return [*state_args(RECORDS), "--acc", acc, *COMMON, *EXTRA[acc], *extra, "--meta-from", str(table_path(acc)),
            "--out", str(table_path(acc, out_dir))]


def row_retable_argv(acc: str, out_dir: Path = TABLES, extra: tuple[str, ...] = ()) -> list[str]:
    return [*state_args(ROW_RECORDS), "--acc", acc, "--b-layout", "row", *COMMON, *EXTRA[acc], *extra,
            "--out", str(table_path(acc, out_dir))]


def confirm_argv(acc: str, round_index: int, out_dir: Path = TABLES, rounds=CONFIRM_ROUNDS) -> list[str]:
    runs = [arg for run_acc, results, table in rounds[round_index][acc]
            for arg in ("--run", f"{run_acc}={REPO / results},{REPO / table}")]
    return ["--table", str(table_path(acc, out_dir)), *runs, "--out", str(table_path(acc, out_dir))]


def ab_revert_argv(acc: str, index: int, out_dir: Path = TABLES, reverts: tuple = AB_REVERTS) -> list[str]:
    spec = reverts[index][acc]
    ab = [arg for pair in spec["ab"] for arg in ("--ab", ",".join(str(REPO / path) for path in pair.split(",")))]
    return ["--table", str(table_path(acc, out_dir)), "--base", str(REPO / spec["base"]),
            "--candidate", str(REPO / spec["candidate"]), *ab, "--out", str(table_path(acc, out_dir))]


def main(argv=None) -> int:
    import shutil
    import tempfile

    from tuner import ab_revert, confirm, lt_identity, prefetch_twins, retable
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", type=Path, default=TABLES)
    p.add_argument("--acc", choices=tuple(EXTRA), action="append", help="default: both")
    p.add_argument("--confirm-rounds", type=int, default=CONFIRM_ROUNDS_BY_DEFAULT,
                   choices=range(len(CONFIRM_ROUNDS) + 1),
                   help=f"apply the first N rounds of grid-benchmark corrections (CONFIRM_ROUNDS; default "
                        f"{CONFIRM_ROUNDS_BY_DEFAULT}, 0: none)")
    p.add_argument("--confirm-row-rounds", type=int, default=ROW_CONFIRM_ROUNDS_BY_DEFAULT,
                   choices=range(len(ROW_CONFIRM_ROUNDS) + 1),
                   help=f"the same for the B row-major entries (ROW_CONFIRM_ROUNDS; default "
                        f"{ROW_CONFIRM_ROUNDS_BY_DEFAULT})")
    p.add_argument("--late-rounds", type=int, default=LATE_ROUNDS_BY_DEFAULT, choices=range(len(LATE_ROUNDS) + 1),
                   help=f"then the first N rounds from grids of the finished tables (LATE_ROUNDS; default "
                        f"{LATE_ROUNDS_BY_DEFAULT})")
    p.add_argument("--snapshots", type=Path, default=None, metavar="DIR",
                   help="also write the table after each step: DIR/col0 (tuned), DIR/colN (col round N), DIR/row0, "
                        "DIR/rowN, DIR/late0..lateN (one build gives every round's table: "
                        "tests/kernels/test_committed_tables.py)")
    p.add_argument("--no-ab-reverts", dest="ab_reverts", action="store_false",
                   help="leave out the A/Bs' reverts (AB_REVERTS, LATE_AB_REVERTS): the tables each A/B measured as "
                        "its candidate")
    p.add_argument("--no-prefetch-twins", dest="prefetch_twins", action="store_false",
                   help="leave the graph choices on their pdl variants (no l2_prefetch twins: tuner/prefetch_twins.py)")
    p.epilog = ("A candidate: any other option goes to every retable step (tuner/retable.py), e.g. --host-us "
                "cublas=24, --pdl-alone-factor 2, --loop-guard, --mid-floor 0.97; retable refuses what it does not know.")
    args, extra = p.parse_known_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    # Built in a fresh directory, then copied: a retable keeps the other B layout's entries of the table it writes
    # over, so building in place would feed the old row entries into the col steps (not what a clean build makes).
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for acc in args.acc or EXTRA:
            def snapshot(step: str) -> None:
                if args.snapshots is not None:
                    (args.snapshots / step).mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(table_path(acc, work), table_path(acc, args.snapshots / step))

            def apply_rounds(rounds: tuple, count: int, step: str, reverts: dict | None = None) -> int:
                """The first `count` of `rounds` (tuner.confirm), each followed by its own A/Bs' reverts (`reverts`:
                round number -> AB_REVERTS-like specs), a snapshot after each (step1, step2, ...)."""
                for round_index in range(count):
                    if acc in rounds[round_index] and (rc := confirm.main(confirm_argv(acc, round_index, work,
                                                                                       rounds))):
                        return rc
                    if rc := apply_reverts((reverts or {}).get(round_index + 1, ())):
                        return rc
                    snapshot(f"{step}{round_index + 1}")
                return 0

            def apply_reverts(reverts: tuple) -> int:
                """The A/Bs' verdicts (tuner.ab_revert) of this accumulator, in order."""
                for index in range(len(reverts) if args.ab_reverts else 0):
                    if acc in reverts[index] and (rc := ab_revert.main(ab_revert_argv(acc, index, work, reverts))):
                        return rc
                return 0

            if rc := retable.main(retable_argv(acc, work, tuple(extra))):
                return rc
            snapshot("col0")
            if rc := apply_rounds(CONFIRM_ROUNDS, args.confirm_rounds, "col"):
                return rc
            if ROW_RECORDS and (rc := retable.main(row_retable_argv(acc, work, tuple(extra)))):
                return rc
            snapshot("row0")
            if rc := apply_rounds(ROW_CONFIRM_ROUNDS, args.confirm_row_rounds, "row"):
                return rc
            if rc := apply_reverts(AB_REVERTS):
                return rc
            for layout in PREFETCH_TWIN_LAYOUTS if args.prefetch_twins else ():
                table = str(table_path(acc, work))
                families = [arg for family in PREFETCH_TWIN_FAMILIES for arg in ("--family", family)]
                if rc := prefetch_twins.main(["--table", table, "--out", table, "--b-layout", layout, *families]):
                    return rc
                for family in PREFETCH_CAPPED.get(layout, ()):
                    capped = ["--family", family, "--cap-kb", str(L2_PREFETCH_CAP_KB)]
                    if rc := prefetch_twins.main(["--table", table, "--out", table, "--b-layout", layout, *capped]):
                        return rc
            if args.late_rounds:
                snapshot("late0")
            if rc := apply_rounds(LATE_ROUNDS, args.late_rounds, "late", LATE_AB_REVERTS):
                return rc
            if LT_IDENTITIES is not None:
                table = str(table_path(acc, work))
                if rc := lt_identity.main(["stamp", "--table", table, "--record", str(REPO / LT_IDENTITIES),
                                           "--out", table]):
                    return rc
            shutil.copyfile(table_path(acc, work), table_path(acc, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
