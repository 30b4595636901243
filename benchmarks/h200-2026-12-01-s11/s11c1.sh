#!/usr/bin/env bash
# Session 11, call 1 (nvidia-h200): the retargeting launch cache on the GPU (the kernel GPU suite over every variant
# the tables run, the fast-path / dispatch / cuBLAS suites), its host-time A/B (HGEMM_RETARGET=0 vs 1, operands rotated
# or not), and per call in the benchmark with retargeting off vs on (60 shapes, f32, two runs).
set -u
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
PACK=${PACK:-.carry1/kernel_cache_tables.tar.gz}
mkdir -p .cache/hgemm && tar xzf $PACK -C .cache/hgemm && rm $PACK
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/env.txt
python3 -m kernels.build --set tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=190 -x \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_tables.txt 2>&1
echo "kernel suite at $(el)s: $(tail -1 $OUT/gpu_kernels_tables.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 70 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=65 \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
# alternating on/off runs (the host's speed drifts within a call: compare each run with torch.matmul in it)
for spec in "64x4096x64 f32 col" "1024x1024x1024 f16 col" "256x1024x512 f32 row"; do
  set -- $spec
  for run in "1 1" "0 64" "1 64" "0 64" "1 64"; do
    set -- $1 $2 $3 $run
    echo "== $1 $2 $3 retarget=$4 rotate=$5" >> $OUT/overhead.txt
    HGEMM_RETARGET=$4 timeout 25 python3 -m kernels.overhead --set tables --shape $1 --acc $2 --b-layout $3 \
      --rotate $5 --calls 1500 >> $OUT/overhead.txt 2>&1
  done
done
echo "overhead at $(el)s" >> $OUT/rc.txt
W=/tmp/s11c1; mkdir -p $W
for r in 0 1; do
  HGEMM_RETARGET=$r timeout --signal=INT --kill-after=10 85 ./eval_one_file.sh --grid benchmarks/h200-2026-12-01-s11/call_ab_shapes.txt \
    --acc_precise fp32 --warmup_seconds 0.05 --benchmark_seconds 0.25 --base_dir $W/ab_fp32_retarget$r \
    --gpu_device_id 0 --mode offline --timing both --baselines torch.matmul,cuBLAS-tn > $W/ab_fp32_retarget$r.log 2>&1
  python3 -m tuner.summary --results $W/ab_fp32_retarget$r/results.csv --out $W/ab_fp32_retarget$r/summary > /dev/null 2>&1
  echo "ab retarget=$r at $(el)s" >> $OUT/rc.txt
done
tar czf $OUT/ab.tar.gz -C $W .
cat $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
grep -E "^==|C fast path|torch.matmul" $OUT/overhead.txt
for d in $W/ab_*/; do echo "== $(basename $d)"; sed -n '/geomean speedup of ours, call/,/^$/p' $d/summary/summary.md | head -5; done
