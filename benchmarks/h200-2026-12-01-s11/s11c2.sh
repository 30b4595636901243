#!/usr/bin/env bash
# Session 11, call 2 (nvidia-h200-x2): per call with retargeting on vs off (HGEMM_RETARGET, two runs of the same 80
# shapes, ours against torch.matmul and cuBLAS TN in each), then the grid in B row-major layout (the API's default and
# CUDA-L2's convention) with the completed row tables, against the like-for-like NN baselines. One accumulator per GPU.
set -u
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
mkdir -p .cache/hgemm && tar xzf .carry/kernel_cache_tables.tar.gz -C .cache/hgemm && rm .carry/kernel_cache_tables.tar.gz
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
W=/tmp/s11c2; mkdir -p $W
ab() {  # gpu acc
  for r in 0 1; do
    HGEMM_RETARGET=$r timeout 150 ./eval_one_file.sh --grid benchmarks/h200-2026-12-01-s11/call_ab_shapes.txt \
      --acc_precise $2 --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $W/ab_$2_retarget$r --gpu_device_id $1 \
      --mode offline --timing both --baselines torch.matmul,cuBLAS-tn > $W/ab_$2_retarget$r.log 2>&1
    python3 -m tuner.summary --results $W/ab_$2_retarget$r/results.csv --out $W/ab_$2_retarget$r/summary > /dev/null 2>&1
  done
}
ab 0 fp32 & ab 1 fp16 & wait
echo "ab done at $(el)s" >> $OUT/rc.txt
SHUFFLE=1 B_LAYOUT=row GRID=tuner/grids/grid_1000.txt DEADLINE=${DEADLINE:-330} WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn,cuBLASLt-auto-tuning-nn STATE=$W/grid_row SKIP_ENV=1 OUT=$OUT/grid_row \
  bash scripts/h200_eval.sh > /tmp/grid_console.txt 2>&1
echo "grid rc=$? at $(el)s" >> $OUT/rc.txt
tar czf $OUT/ab.tar.gz -C $W $(cd $W && ls -d ab_*)
cat $OUT/rc.txt
for d in $W/ab_*/; do echo "== $(basename $d)"; sed -n '/geomean speedup of ours, call/,/^$/p' $d/summary/summary.md 2>/dev/null | head -6; done
cat $OUT/grid_row/summary.txt | grep -E "==|torch.matmul|cuBLAS" | head -30
