#!/usr/bin/env bash
# GPU smoke test of the tuner on the H200, bounded to ~5 minutes. Writes everything under ${OUT:-results/gpu_smoke}.
#   bash tuner/gpu_smoke.sh
# 1. eval_one_file.sh on a few shapes, --timing both, offline and server mode (correctness of every competitor first)
# 2. the summary of that grid run (tables + PNGs)
# 3. if the kernel library imports: agent vs random vs exhaustive on real measurements (smoke variant set),
#    and a short tuning run writing a table into $OUT/tables (never into kernels/tables)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"; [ -x "$PY" ] || PY=python3
OUT="${OUT:-results/gpu_smoke}"
mkdir -p "$OUT"
status=0
step() { echo; echo "=== $1"; }

printf '256_512_1024\n4096_4096_4096\n64_4096_64\n' > "$OUT/grid.txt"

step "eval: grid of 3 shapes, offline, both timings"
timeout 120 ./eval_one_file.sh --grid "$OUT/grid.txt" --acc_precise fp32 --warmup_seconds 1 --benchmark_seconds 2 \
  --base_dir "$OUT/eval_offline" --gpu_device_id 0 --mode offline --timing both || status=1

step "eval: one shape, server mode at 100 QPS"
timeout 60 ./eval_one_file.sh --mnk 64_4096_64 --acc_precise fp16 --warmup_seconds 1 --benchmark_seconds 2 \
  --base_dir "$OUT/eval_server" --gpu_device_id 0 --mode server --target_qps 100 --timing call || status=1

step "summary"
timeout 30 "$PY" -m tuner.summary --results "$OUT/eval_offline/results.csv" --out "$OUT/summary" || status=1

if "$PY" -c "import kernels.space, kernels.runtime, kernels.build" 2>/dev/null; then
  printf '1024_1024_1024\n128_4096_512\n' > "$OUT/compare_grid.txt"
  step "agent vs random vs exhaustive on the GPU (smoke variant set)"
  timeout 150 "$PY" -m tuner.compare --env gpu --grid "$OUT/compare_grid.txt" --variant_set smoke --acc f32 \
    --b_layout col --out "$OUT/compare_gpu" || status=1
  step "tuning run (smoke variant set), table into $OUT/tables"
  timeout 60 "$PY" -m tuner.tune --env gpu --grid "$OUT/compare_grid.txt" --variant-set smoke --acc fp32 \
    --budget-trials 8 --state-dir "$OUT/tune" --tables-dir "$OUT/tables" || status=1
else
  echo "kernel library not importable: skipping the GPU agent comparison"
fi
echo; echo "gpu_smoke: $([ $status = 0 ] && echo PASS || echo FAIL) (outputs in $OUT)"
exit $status
