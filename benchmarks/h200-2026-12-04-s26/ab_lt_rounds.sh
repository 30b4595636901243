#!/usr/bin/env bash
# Ready for the next device session (nvidia-h200; carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack) +
# .carry3/candLT = `python -m tuner.committed_tables --confirm-rounds 7 --confirm-row-rounds 10 --out-dir
# .carry3/candLT`, ~2.5 min on the CPU box): the candidate correction rounds from the grids beside cuBLASLt
# autotuning (col round 7: session 25's col grids; row round 10: session 26's f32 row grid and session 25's f16 one;
# tuner/committed_tables.py) against the committed tables, A/B in both roles on every changed entry
# (lt_changed_<acc>_<layout>.txt: f32 1 col / 14 row, f16 12 col / 46 row; graph and eager roles together). No new
# variant (`kernels.build --tables committed,<cand> --dry-run`: 124 cached). Run after
# `bash scripts/device_slim.sh out h200-2026-12-04-s26`; returns ab_col/, ab_row/ (tuner.ab summaries) in one tarball.
# (Ran as session 27's call 1.)
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry3/candLT
SHAPES=benchmarks/h200-2026-12-04-s26/lt_changed
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
pack_out ${CALL:-call1}
