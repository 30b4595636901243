#!/usr/bin/env bash
# Session 65's call 3 on an H100, in one call because fresh machines came rarely this session (5 of 6 tries refused):
# 1. the floor recheck of call 1's grid (call 1's own was void: d90374f), timed on the tables that grid measured
#    (the tree's, 2cc82d1's), into $OUT/grid_row_fp16/recheck;
# 2. then the A/B of the candidate overlay (s65ab/cand_overlay/sm90_f16.json: tuner.gpu_overlays with call 1's grid
#    added as a plain run, which changes three f16 row entries) against the tables before (s65ab/old_tables), and the
#    grid's below-floor shapes timed again on the candidate (scripts/device_ab_changed.sh's FLOOR step).
# The overlay committed afterwards reads the recheck (tuner.gpu_overlays.Rechecked); the A/B's verdicts hold for the
# entries it shares with the candidate, which session 65's filing checks entry by entry.
#   HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-07-s65/call3.sh   (carry .whl .carry7 .carry8 s65ab)
set -u
source scripts/device_prologue.sh
S65=benchmarks/h100-2026-12-07-s65
GRID=$S65/call1/grid_row/fp16/results.json.gz
OUT=$OUT/grid_row_fp16/recheck FIRST=$GRID B_LAYOUT=row ACC=fp16 ROUNDS=3 DEADLINE=${RECHECK_S:-150} \
  bash scripts/floor_recheck.sh > /tmp/recheck_console.txt 2>&1
echo "recheck row fp16 rc=$? at $(el)s: $(head -1 $OUT/grid_row_fp16/recheck/summary.txt)" >> $OUT/rc.txt
cp s65ab/cand_overlay/sm90_f16.json kernels/tables/gpus/nvidia-h100-80gb-hbm3/sm90_f16.json
echo "candidate overlay $(sha256sum kernels/tables/gpus/nvidia-h100-80gb-hbm3/sm90_f16.json | cut -c1-12)" >> $OUT/rc.txt
OLD=s65ab/old_tables SHAPES=s65ab/changed LAYOUTS=row AB_DL=${AB_DL:-120} BENCH_S=0.3; source scripts/h200_ab_layouts.sh
OUT=$OUT/floor_row_fp16 FIRST=$GRID B_LAYOUT=row ACC=fp16 ROUNDS=3 DEADLINE=${FLOOR_S:-90} \
  bash scripts/floor_recheck.sh > /tmp/floor_console.txt 2>&1
echo "floor recheck on the candidate rc=$? at $(el)s: $(head -1 $OUT/floor_row_fp16/summary.txt 2>/dev/null)" \
  >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/grid_row_fp16/recheck/report.md; grep -hv " rc=" $OUT/ab_*/summary.txt
cat $OUT/floor_row_fp16/report.md 2>/dev/null
pack_out call3
