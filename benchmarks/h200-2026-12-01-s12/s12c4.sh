#!/usr/bin/env bash
# Session 12, call 4 (nvidia-h200): the grid in B row-major layout with this session's row entries (complete now),
# against the NN baselines; f32 then f16, each cut at DEADLINE seconds. The shuffle is session 11's (s11c2.sh), so
# the shapes measured are nearly the same sample.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
SHUFFLE=1 B_LAYOUT=row GRID=tuner/grids/grid_1000.txt DEADLINE=${DEADLINE:-220} WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn,cuBLASLt-auto-tuning-nn STATE=/tmp/s12c4/grid_row SKIP_ENV=1 OUT=$OUT \
  bash scripts/h200_eval.sh > /tmp/grid_console.txt 2>&1
echo "grid rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/summary.txt | head -40
