#!/usr/bin/env bash
# One bounded kernel session on the H200 host (device tool), from the repo root:  OUT=dir bash scripts/h200_tune.sh
# Build the default variant set, run every GPU test, measure host overhead, tune a fixed sample of the CUDA-L2 grid
# (writes kernels/tables/sm90_f32.json), benchmark a sample against all baselines (kernel-only and per call), summarize.
# Returns at most 4 files in $OUT: summary.txt, logs.tar.gz, results.tar.gz (tables, tuning state, eval, plots),
# kernel_cache.tar.gz (built variants, for `python -m kernels.build --unpack` on a machine with the same toolchain).
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
W=/tmp/h200_work; rm -rf $W; mkdir -p $W/logs $W/results
export PYTHONUNBUFFERED=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
source scripts/device_env.sh
mkdir -p .cache/hgemm
for f in .carry/kernel_cache*.tar.gz; do [ -f "$f" ] && tar xzf "$f" -C .cache/hgemm; done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; nvcc --version | tail -1; } \
  | tee -a "$OUT/summary.txt"
say "== build default t=$(el)"
timeout ${BUILD_TIMEOUT:-200} python3 -m kernels.build --set default --jobs "$(nproc)" > $W/logs/build.log 2>&1
say "$(tail -1 $W/logs/build.log)"
for area in kernels tuner service; do
  HGEMM_TEST_SET=default timeout ${TEST_TIMEOUT:-100} python3 -m pytest tests/$area -m gpu -q -o timeout=100 -p no:cacheprovider \
    > $W/logs/test_$area.log 2>&1
  say "gpu tests $area: $(tail -1 $W/logs/test_$area.log)"
  grep -E "^(FAILED|ERROR)" $W/logs/test_$area.log | head -5 | tee -a "$OUT/summary.txt"
done
if [ "${SKIP_OVERHEAD:-0}" != 1 ]; then
  say "== host overhead t=$(el)"
  timeout 60 python3 -m kernels.overhead > $W/logs/overhead.log 2>&1; tail -8 $W/logs/overhead.log | tee -a "$OUT/summary.txt"
fi
say "== tune grid_sample_120 (fp32, col) t=$(el)"
timeout ${TUNE_TIMEOUT:-170} python3 -m tuner.tune --env gpu --grid tuner/grids/grid_sample_120.txt --acc fp32 \
  --b-layout col --variant-set default --budget-trials ${TUNE_TRIALS:-12} --budget-seconds ${TUNE_SECONDS:-0.6} \
  --state-dir $W/results/tune --tables-dir kernels/tables --holdout-fraction 0.15 --min-speedup ${TUNE_MIN_SPEEDUP:-1.0} > $W/logs/tune.log 2>&1
tail -12 $W/logs/tune.log | tee -a "$OUT/summary.txt"
cp -r kernels/tables $W/results/ 2>/dev/null
say "== eval eval_sample (fp32, col, both timings) t=$(el)"
timeout ${EVAL_TIMEOUT:-130} ./eval_one_file.sh --grid tuner/grids/eval_sample.txt --acc_precise fp32 \
  --warmup_seconds 0.2 --benchmark_seconds 0.8 --base_dir $W/results/eval --gpu_device_id 0 --mode offline \
  --timing both > $W/logs/eval.log 2>&1
timeout 60 python3 -m tuner.summary --results $W/results/eval/results.csv --out $W/results/summary \
  > $W/logs/summary.log 2>&1
cat $W/logs/summary.log | head -40 | tee -a "$OUT/summary.txt"
say "== pack t=$(el)"
[ "${PACK:-1}" = 1 ] && (cd .cache/hgemm && tar czf "$OUT/kernel_cache.tar.gz" lib)
tar czf "$OUT/logs.tar.gz" -C $W logs; tar czf "$OUT/results.tar.gz" -C $W results
ls -la "$OUT" | tail -n +2; say "done t=$(el)"
