#!/usr/bin/env bash
# One bounded kernel session on the H200 host (device tool), from the repo root:  OUT=dir bash scripts/h200_tune.sh
# Build the default variant set, run every GPU test, measure host overhead, tune a grid (default: a fixed sample of
# the CUDA-L2 grid; writes kernels/tables/sm90_<acc>.json), benchmark a sample against all baselines (kernel-only and
# per call), summarize. Knobs (env): GRID, TUNE_ACCS ("fp32 fp16"), TUNE_LAYOUTS ("col row"), HOLDOUT, TUNE_DEADLINE
# (s per acc x layout), TUNE_TRIALS, TUNE_SECONDS, TUNE_MIN_SPEEDUP, EVAL_GRID, EVAL_ACCS, SKIP_TESTS, SKIP_OVERHEAD,
# SKIP_TUNE, SKIP_EVAL, PACK, VARIANT_SET (default | wide), and the *_TIMEOUT limits. Tuning uses every visible GPU (one worker each).
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
python3 -c 'import kernels.fastpath as f; f.load(); print("fast path:", f.unavailable_reason() or "built")' \
  | tee -a "$OUT/summary.txt"
say "== build default t=$(el)"
timeout ${BUILD_TIMEOUT:-200} python3 -m kernels.build --set ${VARIANT_SET:-default} --jobs "$(nproc)" > $W/logs/build.log 2>&1
say "$(tail -1 $W/logs/build.log)"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  timeout 60 python3 -m pytest tests/kernels/test_fastpath.py -q -p no:cacheprovider -m "not gpu" > $W/logs/test_fastpath_cpu.log 2>&1
  say "fast path CPU-stub tests: $(tail -1 $W/logs/test_fastpath_cpu.log)"
  for area in kernels tuner service; do
    HGEMM_TEST_SET=${VARIANT_SET:-default} timeout ${TEST_TIMEOUT:-150} python3 -m pytest tests/$area -m gpu -q -o timeout=100 \
      -p no:cacheprovider > $W/logs/test_$area.log 2>&1
    say "gpu tests $area: $(tail -1 $W/logs/test_$area.log)"
    grep -E "^(FAILED|ERROR)" $W/logs/test_$area.log | head -5 | tee -a "$OUT/summary.txt"
  done
fi
if [ "${SKIP_OVERHEAD:-0}" != 1 ]; then
  say "== host overhead t=$(el)"
  for shape in 64x4096x64 4096x4096x4096; do
    timeout 60 python3 -m kernels.overhead --shape $shape > $W/logs/overhead_$shape.log 2>&1
    tail -9 $W/logs/overhead_$shape.log | tee -a "$OUT/summary.txt"
  done
  timeout 60 python3 -m kernels.overhead --stub > $W/logs/overhead_stub.log 2>&1
  tail -12 $W/logs/overhead_stub.log | tee -a "$OUT/summary.txt"
fi
GRID=${GRID:-tuner/grids/grid_sample_120.txt}
if [ "${SKIP_TUNE:-0}" != 1 ]; then
  for acc in ${TUNE_ACCS:-fp32}; do
    for layout in ${TUNE_LAYOUTS:-col}; do
      say "== tune $GRID ($acc, $layout) t=$(el)"
      timeout ${TUNE_TIMEOUT:-300} python3 -m tuner.tune --env gpu --grid $GRID --acc $acc --b-layout $layout \
        --variant-set ${VARIANT_SET:-default} --budget-trials ${TUNE_TRIALS:-12} --budget-seconds ${TUNE_SECONDS:-0.6} \
        --deadline-seconds ${TUNE_DEADLINE:-240} --state-dir $W/results/tune --tables-dir kernels/tables \
        --holdout-fraction ${HOLDOUT:-0.15} --min-speedup ${TUNE_MIN_SPEEDUP:-1.0} > $W/logs/tune_${acc}_$layout.log 2>&1
      grep -v "^tune " $W/logs/tune_${acc}_$layout.log | tail -12 | tee -a "$OUT/summary.txt"
    done
  done
  cp -r kernels/tables $W/results/ 2>/dev/null
fi
if [ "${SKIP_EVAL:-0}" != 1 ]; then
  for acc in ${EVAL_ACCS:-fp32}; do
    say "== eval ${EVAL_GRID:-tuner/grids/eval_sample.txt} ($acc, col, both timings) t=$(el)"
    timeout ${EVAL_TIMEOUT:-130} ./eval_one_file.sh --grid ${EVAL_GRID:-tuner/grids/eval_sample.txt} --acc_precise $acc \
      --warmup_seconds 0.2 --benchmark_seconds 0.8 --base_dir $W/results/eval_$acc --gpu_device_id 0 --mode offline \
      --timing both > $W/logs/eval_$acc.log 2>&1
    timeout 60 python3 -m tuner.summary --results $W/results/eval_$acc/results.csv --out $W/results/summary_$acc \
      > $W/logs/summary_$acc.log 2>&1
    head -40 $W/logs/summary_$acc.log | tee -a "$OUT/summary.txt"
  done
fi
say "== pack t=$(el)"
[ "${PACK:-1}" = 1 ] && (cd .cache/hgemm && tar czf "$OUT/kernel_cache.tar.gz" lib)
tar czf "$OUT/logs.tar.gz" -C $W logs; tar czf "$OUT/results.tar.gz" -C $W results
ls -la "$OUT" | tail -n +2; say "done t=$(el)"
