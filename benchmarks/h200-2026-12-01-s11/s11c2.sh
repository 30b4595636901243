#!/usr/bin/env bash
# Session 11, call 2 (nvidia-h200): the grid in B row-major layout (the API's default and CUDA-L2's convention) with
# the committed row entries, against the like-for-like NN baselines; f32 then f16, each cut at DEADLINE seconds
# (shuffled order: a cut run is a fair sample of every size).
set -u
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
PACK=${PACK:-.carry1/kernel_cache_tables.tar.gz}
mkdir -p .cache/hgemm && tar xzf $PACK -C .cache/hgemm && rm $PACK
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
SHUFFLE=1 B_LAYOUT=row GRID=tuner/grids/grid_1000.txt DEADLINE=${DEADLINE:-235} WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn,cuBLASLt-auto-tuning-nn STATE=/tmp/s11c2/grid_row SKIP_ENV=1 OUT=$OUT \
  bash scripts/h200_eval.sh > /tmp/grid_console.txt 2>&1
echo "grid rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/rc.txt; grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/summary.txt | head -40
