#!/usr/bin/env bash
# Session 18, call 4 (nvidia-h200, carry .whl + .carry1 + .carry2), at the commit with round 4 and call 3's verdicts:
#  1. the GPU kernel suite over the 115 variants the committed tables now run (6 more than call 1: row twins), and the
#     fast-path / dispatch / cuBLAS / eval suites (the per-shape variant test included: the tables_row pack is here);
#  2. the next twin sweep, for a round 5 (measured here, A/B left to a later call): per row shape of 1e9-1e11 FLOP
#     whose entry does not run its col choice's row twin, those twins beside the tables' choice (twin_sweep_all_<acc>.txt
#     from `python -m tuner.twin_sweep --acc A --min-flop 1e9 --max-flop 1e11` on these tables), deadlines from END.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s18
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT SET=tables bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt  # (as run: the same two pytest
echo "suites done at $(el)s" >> $OUT/rc.txt  # commands inline; rc.txt has their lines with the time)
DL=$(( (${END:-480} - $(el)) / 2 - 25 ))
OUT=$OUT/sweep LIST_fp32=$S/twin_sweep_all_f32.txt LIST_fp16=$S/twin_sweep_all_f16.txt DEADLINE=$DL SKIP_ENV=1 \
  bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "sweep (deadline $DL s each) done at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
pack_out call4
