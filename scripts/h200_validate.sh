#!/usr/bin/env bash
# One bounded validation session on the H200 host (device tool), run from the repo root:
#   bash scripts/h200_validate.sh            (OUT=... for the logs; ~8 minutes)
# 1. offline wheels (.whl) and carried kernel caches (.carry/cache_*.tar.gz), 2. every GPU test, 3. host overhead,
# 4. tuner smoke (benchmark CLI, summary, agent on real measurements), 5. service batching benchmark on the GPU.
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
export PYTHONUNBUFFERED=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:${PYTHONPATH:-} && export PATH=/tmp/site/bin:$PATH
fi
mkdir -p .cache/hgemm
for f in .carry/cache_*.tar.gz; do [ -f "$f" ] && tar xzf "$f" -C .cache/hgemm; done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  nvcc --version | tail -1; git rev-parse --short HEAD 2>/dev/null; date -u; } > "$OUT/env.txt" 2>&1
declare -A RESULT
echo "== build default (cache) t=$(el)"
timeout 300 python3 -m kernels.build --set default --jobs "$(nproc)" > "$OUT/build.log" 2>&1; tail -2 "$OUT/build.log"
for area in kernels service tuner; do
  echo "== gpu tests: $area t=$(el)"
  timeout ${TEST_TIMEOUT:-150} python3 -m pytest tests/$area -m gpu -q -x -o timeout=120 -p no:cacheprovider \
    > "$OUT/test_$area.log" 2>&1
  RESULT[$area]=$(tail -1 "$OUT/test_$area.log")
  grep -E "^(FAILED|ERROR)|Error:" "$OUT/test_$area.log" | head -8
done
echo "== host overhead t=$(el)"
timeout 60 python3 -m kernels.overhead > "$OUT/overhead.log" 2>&1; tail -12 "$OUT/overhead.log"
if [ "${SKIP_TUNER:-0}" != 1 ]; then
  echo "== tuner smoke t=$(el)"
  OUT_T=/tmp/tuner_smoke; rm -rf $OUT_T
  OUT=$OUT_T PYTHON=python3 timeout ${TUNER_TIMEOUT:-240} bash tuner/gpu_smoke.sh > "$OUT/tuner_smoke.log" 2>&1
  tar czf "$OUT/tuner_smoke.tar.gz" -C /tmp tuner_smoke 2>/dev/null
  grep -E "gpu_smoke:|speedup|Error|FAIL" "$OUT/tuner_smoke.log" | tail -12
fi
echo "== service batching benchmark (GPU) t=$(el)"
timeout 120 python3 -m service.bench_batching --backend gpu --seconds 8 --procs 4 --clients 32 \
  > "$OUT/bench_batching.log" 2>&1; tail -8 "$OUT/bench_batching.log"
echo "== summary t=$(el)"
for area in kernels service tuner; do echo "gpu tests $area: ${RESULT[$area]}"; done
