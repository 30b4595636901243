#!/usr/bin/env bash
# Written in session 32 for the next session with a device, call 2: the capped row sm90 twins (set
# l2_prefetch_capped_row) — their kernel suite; then the row A/B of make_s32_cand.py's candidate: every row splitk
# graph choice the rule leaves (34 f32 / 38 f16) and 80 sampled of the 173 f32 / 224 f16 row sm90 ones it leaves, each
# moved to its 64 KB-capped twin, both roles; per-shape results tell the families apart (ab_by_family.py). Carry .whl
# (without the Locust wheels) and .carry8 (the row tables' and candidate's variants, and the candidate): it needs
# nothing from call 1. Returns env.txt, rc.txt, call2.tgz.
set -u
source scripts/device_prologue.sh
OUT=$OUT SET=l2_prefetch_capped_row KERNEL_S=90 DISPATCH_S=0 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
CAND=$PWD/.carry8/candCap2 SHAPES=benchmarks/h200-2026-12-05-s32/cap2 AB_DL=${AB_DL:-75} LAYOUTS=row
source scripts/h200_ab_layouts.sh
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_row/summary.txt
pack_out ${CALL:-call2}
