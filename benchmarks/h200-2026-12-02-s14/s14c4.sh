#!/usr/bin/env bash
# Session 14, call 4 (nvidia-h200): a shuffled sample of the whole grid (the first shapes of grid_1000.txt shuffled with
# random.Random(0), the order of session 11's col grid), B col-major, f32 then f16, 150 s each: the committed tables
# (06d95d9, with the splitk cluster entries) against torch.matmul and against the tables before them
# (ours[base] = .carry5/base_tables, 083de5a), kernel-only and per call, interleaved.
set -u
source scripts/device_prologue.sh
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=col DEADLINE=${DEADLINE:-150} WARMUP_S=0.05 \
  BENCH_S=0.2 BASELINES=torch.matmul ALSO_TABLES=base=.carry5/base_tables STATE=/tmp/s14c4 SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid col rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; tail -40 $OUT/grid_col/summary.txt
