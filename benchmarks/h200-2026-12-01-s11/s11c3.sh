#!/usr/bin/env bash
# Session 11, call 3 (nvidia-h200): the grid in B col-major layout (the committed col tables, unchanged since session
# 10) now that calls on moved operands retarget the prepared launch: f32 then f16, shuffled, each cut at DEADLINE s.
set -u
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
PACK=${PACK:-.carry1/kernel_cache_tables.tar.gz}
mkdir -p .cache/hgemm && tar xzf $PACK -C .cache/hgemm && rm $PACK
SHUFFLE=1 GRID=tuner/grids/grid_1000.txt DEADLINE=${DEADLINE:-175} WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-tn,cuBLASLt-auto-tuning-tn STATE=/tmp/s11c3/grid_col SKIP_ENV=1 OUT=$OUT \
  bash scripts/h200_eval.sh > /tmp/grid_console.txt 2>&1
echo "grid rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/rc.txt; grep -E "==|torch.matmul|cuBLASLt-auto-tuning-tn" $OUT/summary.txt | head -40
