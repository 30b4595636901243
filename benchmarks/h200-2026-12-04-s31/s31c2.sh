#!/usr/bin/env bash
# Session 31, call 2 (for the next session with a device): the A/B of .carry4/candS31 in the row layout, both roles,
# on 120 shapes per accumulator: session 30's sample of 80 row graph choices that the l2_prefetch rule moves to sm90
# twins (what s30c4.sh was to run) and 40 sampled of the 70 f32 / 73 f16 splitk row choices moved to theirs. Per-shape
# results tell the two apart (a shape's graph choice is one family). Same carry as call 1.
set -u
source scripts/device_prologue.sh
CAND=$PWD/.carry4/candS31 SHAPES=benchmarks/h200-2026-12-04-s31/l2sk AB_DL=${AB_DL:-75} LAYOUTS=row
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_row/summary.txt
pack_out ${CALL:-call2}
