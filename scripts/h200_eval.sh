#!/usr/bin/env bash
# Benchmark a grid on the H200 host(s) with every baseline, one accumulator per GPU, resumable across device calls:
#   OUT=dir GRID=tuner/grids/grid_1000.txt ACCS="fp32 fp16" STATE=dir DEADLINE=480 bash scripts/h200_eval.sh
# Each accumulator's results live in STATE/eval_<acc> (eval_one_file.sh --resume: shapes already there are kept); a run
# stops after DEADLINE seconds and the next call continues (with fewer GPUs than accumulators they run one after the
# other, each up to DEADLINE). WARMUP_S / BENCH_S / BASELINES / CALL_BURST / ALSO_TABLES (NAME=DIR) / ALSO_DISPATCHERS / B_LAYOUT pass through;
# RESUME_FROM continues a committed run. SHUFFLE=1 measures the grid in a
# fixed pseudo-random order, so that a run cut short by DEADLINE is a fair sample of every size rather than the smallest.
# Returns summary.txt and eval.tar.gz (results CSV/JSON and tuner.summary's tables and plots per accumulator).
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
GRID=${GRID:-tuner/grids/grid_1000.txt}; ACCS=${ACCS:-"fp32 fp16"}; STATE=${STATE:-results/eval_grid}
DEADLINE=${DEADLINE:-480}; mkdir -p "$STATE"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
[ -n "${SKIP_ENV:-}" ] || source scripts/device_env.sh
mkdir -p .cache/hgemm
if [ -n "${SHUFFLE:-}" ]; then
  python3 -c "import random,sys; s=open(sys.argv[1]).read().split(); random.Random(0).shuffle(s); print(*s, sep='\n')" \
    "$GRID" > /tmp/h200_eval_grid.txt && GRID=/tmp/h200_eval_grid.txt
fi
for f in .carry/kernel_cache*.tar.gz; do [ -f "$f" ] && tar xzf "$f" -C .cache/hgemm; done
# RESUME_FROM=dir with <acc>/results.json(.gz) + results.csv(.gz) (a committed sample, e.g. benchmarks/…-s7/grid_sample):
# its shapes seed STATE, so with the same SHUFFLE order the run measures only the rest of the grid
if [ -n "${RESUME_FROM:-}" ]; then
  seed() { if [ -f "$1.gz" ]; then gunzip -c "$1.gz" > "$2"; else cp "$1" "$2"; fi; }   # tuner.file_grid gzips both
  for acc in $ACCS; do
    [ -f "$STATE/eval_$acc/results.json" ] && continue
    mkdir -p "$STATE/eval_$acc"
    for f in results.json results.csv; do seed "$RESUME_FROM/$acc/$f" "$STATE/eval_$acc/$f"; done
  done
fi
mapfile -t GPUS < <(nvidia-smi --query-gpu=index --format=csv,noheader)
slot=0
for acc in $ACCS; do
  gpu=${GPUS[$(( slot % ${#GPUS[@]} ))]}; slot=$((slot + 1))
  timeout --signal=INT --kill-after=30 "$DEADLINE" ./eval_one_file.sh --grid "$GRID" --acc_precise $acc \
    --warmup_seconds ${WARMUP_S:-0.1} --benchmark_seconds ${BENCH_S:-0.4} --base_dir "$STATE/eval_$acc" \
    --gpu_device_id $gpu --mode offline --timing both --call_burst ${CALL_BURST:-1} --resume \
    ${BASELINES:+--baselines $BASELINES} ${ALSO_TABLES:+--also_tables $ALSO_TABLES} ${B_LAYOUT:+--b_layout $B_LAYOUT} \
    ${ALSO_DISPATCHERS:+--also_dispatchers $ALSO_DISPATCHERS} \
    > "$STATE/eval_$acc.log" 2>&1 &
  [ $slot -ge ${#GPUS[@]} ] && wait -n
done
wait
for acc in $ACCS; do
  n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['shapes']))" "$STATE/eval_$acc/results.json" \
      2>/dev/null || echo 0)
  say "== $acc: $n of $(grep -c . "$GRID") shapes"
  python3 -m tuner.summary --results "$STATE/eval_$acc/results.csv" --out "$STATE/summary_$acc" > "$STATE/summary_$acc.log" 2>&1
  head -30 "$STATE/summary_$acc.log" | tee -a "$OUT/summary.txt"
done
tar czf "$OUT/eval.tar.gz" -C "$STATE" .
