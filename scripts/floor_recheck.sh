#!/usr/bin/env bash
# The shapes a grid run put below the 0.97x floor, timed again in ROUNDS fresh eval runs (tuner/floor_recheck.py says
# why; scripts/h200_eval.sh times them, every competitor checked first, as in the grid), then the report:
#   OUT=dir FIRST=grid/results.json.gz B_LAYOUT=col ACC=fp32 BASELINES=torch.matmul,cuBLAS-tn ROUNDS=3 DEADLINE=150 \
#     bash scripts/floor_recheck.sh
# DEADLINE (s) is split over the rounds; BENCH_S (default 0.4, twice the grid's) per competitor and shape. BASELINES
# defaults to those the grid timed (python -m tuner.floor_recheck baselines). Each round starts empty: a RESUME_FROM
# inherited from a resumed grid's call (scripts/device_next_calls.sh) would seed it with the grid's own readings,
# which is how session 65's first recheck "timed" the grid's two shapes three times without running them.
set -uo pipefail
OUT=${OUT:-floor_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
ROUNDS=${ROUNDS:-3}; STATE=$(mktemp -d /tmp/floor_recheck.XXXX)
BASELINES=${BASELINES:-$(python3 -m tuner.floor_recheck baselines --results "$FIRST" 2>> "$OUT/summary.txt")} || exit 1
python3 -m tuner.floor_recheck pick --results "$FIRST" --baselines "$BASELINES" --out "$STATE/shapes.txt" \
  2>> "$OUT/summary.txt"
cp "$STATE/shapes.txt" "$OUT/"
[ -s "$STATE/shapes.txt" ] || exit 0
rounds=()
for r in $(seq 1 "$ROUNDS"); do
  RESUME_FROM= OUT=$STATE/out$r GRID=$STATE/shapes.txt ACCS=$ACC B_LAYOUT=$B_LAYOUT BASELINES=$BASELINES \
    STATE=$STATE/round$r DEADLINE=$(( ${DEADLINE:-150} / ROUNDS )) WARMUP_S=0.1 BENCH_S=${BENCH_S:-0.4} SKIP_ENV=1 \
    bash scripts/h200_eval.sh > "$STATE/round$r.log" 2>&1
  f=$STATE/round$r/eval_$ACC/results.json
  [ -f "$f" ] && rounds+=("$f") && cp "$f" "$OUT/round$r.json"
done
[ ${#rounds[@]} -gt 0 ] || { echo "no round finished" >> "$OUT/summary.txt"; exit 1; }
python3 -m tuner.floor_recheck report --results "$FIRST" --rounds "${rounds[@]}" --baselines "$BASELINES" \
  --out "$OUT" >> "$OUT/summary.txt"
