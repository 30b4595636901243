#!/usr/bin/env bash
# Tune a whole grid on the H200 host(s), one (accumulator, layout) job per GPU, all GPUs at once:
#   OUT=dir GRID=tuner/grids/grid_1000.txt JOBS="fp32:col fp16:col" STATE=dir DEADLINE=300 bash scripts/h200_grid.sh
# Each job is its own process on its own GPU (inline search: built kernels stay loaded), resumable from STATE (the
# finished_<acc>_<layout>.jsonl files), and writes kernels/tables/sm90_<acc>.json when its deadline or the grid ends.
# VARIANT_SET picks the kernel variants (default; wide = default + 30 more, B col-major); TESTS=1 runs their GPU
# correctness suite first. OBJECTIVE (kernel|call, tuner/objective.py) is what the written tables optimize; the records
# keep every trial, so the other objective's tables are rebuilt from them (tuner.retable, no GPU) and, with EVAL_GRID,
# compete in the same eval run as ours[<other objective>]. MERGE_STATES adds earlier runs' records to the tables.
# Jobs beyond the GPU count wait for a free GPU. With EVAL_GRID set, each job's accumulator is then benchmarked on
# its GPU (eval_one_file.sh, all baselines, both timings; layout col) and summarized.
# Returns summary.txt and tune.tar.gz (state, tables, logs, eval results) in $OUT.
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
GRID=${GRID:-tuner/grids/grid_1000.txt}; JOBS=${JOBS:-"fp32:col fp16:col"}; STATE=${STATE:-results/tune}
DEADLINE=${DEADLINE:-300}; OBJECTIVE=${OBJECTIVE:-kernel}; W=/tmp/h200_grid; rm -rf $W; mkdir -p $W/logs "$STATE"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
[ -n "${SKIP_ENV:-}" ] || source scripts/device_env.sh
mkdir -p .cache/hgemm
for f in .carry/kernel_cache*.tar.gz; do [ -f "$f" ] && tar xzf "$f" -C .cache/hgemm; done
timeout 200 python3 -m kernels.build --set ${VARIANT_SET:-default} --jobs "$(nproc)" > $W/logs/build.log 2>&1
say "$(tail -1 $W/logs/build.log)"
if [ "${TESTS:-0}" = 1 ]; then  # the variants' GPU correctness suite first (fp64 reference, zero-one, graphs, ...)
  HGEMM_TEST_SET=${VARIANT_SET:-default} timeout ${TEST_TIMEOUT:-200} python3 -m pytest tests/kernels -m gpu -q \
    -p no:cacheprovider > $W/logs/test_kernels.log 2>&1
  say "gpu tests kernels (${VARIANT_SET:-default}): $(tail -1 $W/logs/test_kernels.log)"
  grep -E "^(FAILED|ERROR)" $W/logs/test_kernels.log | head -5 | tee -a "$OUT/summary.txt"
fi
mapfile -t GPUS < <(nvidia-smi --query-gpu=index --format=csv,noheader)
say "== tune $GRID: jobs [$JOBS] on GPUs [${GPUS[*]}], deadline ${DEADLINE}s each, t=$(el)"
pids=(); slot=0
for job in $JOBS; do
  acc=${job%%:*}; layout=${job##*:}
  if [ ${#pids[@]} -ge ${#GPUS[@]} ]; then wait -n; fi  # a GPU frees up
  gpu=${GPUS[$(( slot % ${#GPUS[@]} ))]}; slot=$((slot + 1))
  python3 -m tuner.tune --env gpu --grid "$GRID" --acc $acc --b-layout $layout --gpus $gpu --variant-set ${VARIANT_SET:-default} \
    --budget-trials ${TUNE_TRIALS:-12} --budget-seconds ${TUNE_SECONDS:-0.4} --lt-sweep-us ${LT_SWEEP_US:-100} \
    --deadline-seconds $DEADLINE \
    --state-dir "$STATE" --tables-dir kernels/tables --min-speedup ${TUNE_MIN_SPEEDUP:-1.01} --objective $OBJECTIVE \
    > $W/logs/tune_${acc}_$layout.log 2>&1 &
  pids+=($!)
done
wait
for job in $JOBS; do
  acc=${job%%:*}; layout=${job##*:}
  say "-- $acc $layout: $(grep -v '^tune ' $W/logs/tune_${acc}_$layout.log | tr -d '\n' | tr -s ' ' | tail -c 400)"
done
OTHER=$([ "$OBJECTIVE" = call ] && echo kernel || echo call); mkdir -p $W/tables_$OTHER
# The final tables come from the records (tuner.retable): merged with earlier runs' records (MERGE_STATES, folders
# of finished_*.jsonl[.gz]), and an f16 table takes faster f32-accumulating choices when the fp32 job of its layout ran
# (tuner/merge.py). The same for the other objective, into $W/tables_$OTHER. A `call` table also carries the `kernel`
# objective's choices for calls captured into CUDA graphs (--graph-objective: no launch cost in a replay).
for job in $JOBS; do
  acc=${job%%:*}; layout=${job##*:}; short=$([ $acc = fp16 ] && echo f16 || echo f32)
  states="--state $STATE"; for s in ${MERGE_STATES:-}; do states="$states --state $s"; done
  borrow=""; [ $short = f16 ] && [[ " $JOBS " == *" fp32:$layout "* ]] && borrow="--borrow-f32"
  for objective in $OBJECTIVE $OTHER; do
    dir=$([ $objective = $OBJECTIVE ] && echo kernels/tables || echo $W/tables_$OTHER)
    graph=""; [ $objective = call ] && graph="--graph-objective kernel"
    python3 -m tuner.retable $states --acc $short --b-layout $layout --objective $objective $borrow $graph \
      --meta-from kernels/tables/sm90_$short.json --out $dir/sm90_$short.json >> $W/logs/retable.log 2>&1
  done
done
say "tables ($OBJECTIVE): $(for f in kernels/tables/sm90_*.json; do python3 -c "import json,collections,sys; from tuner.grid_report import family; t=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], dict(collections.Counter(family(e['kernel']) for e in t['entries'])))" $f; done | tr '\n' ' ')"
say "retable: $(tr '\n' ' ' < $W/logs/retable.log | tail -c 1200)"
if [ -n "${EVAL_GRID:-}" ]; then
  say "== eval $EVAL_GRID t=$(el)"
  slot=0; mkdir -p $W/eval
  for acc in $(for job in $JOBS; do echo ${job%%:*}; done | sort -u); do
    gpu=${GPUS[$(( slot % ${#GPUS[@]} ))]}; slot=$((slot + 1))
    ( timeout ${EVAL_TIMEOUT:-200} ./eval_one_file.sh --grid $EVAL_GRID --acc_precise $acc --warmup_seconds 0.2 \
        --benchmark_seconds 0.8 --base_dir $W/eval/$acc --gpu_device_id $gpu --mode offline --timing both \
        --also_tables $OTHER=$W/tables_$OTHER > $W/logs/eval_$acc.log 2>&1
      python3 -m tuner.summary --results $W/eval/$acc/results.csv --out $W/eval/summary_$acc > $W/logs/summary_$acc.log 2>&1
    ) &
  done
  wait
  for acc in $(for job in $JOBS; do echo ${job%%:*}; done | sort -u); do
    say "-- eval $acc"; head -30 $W/logs/summary_$acc.log | tee -a "$OUT/summary.txt"
  done
fi
python3 - "$STATE" <<'EOF' | tee -a "$OUT/summary.txt"
import json, sys, statistics
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("finished_*.jsonl")):
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    timed = [r["job_seconds"] for r in recs if "job_seconds" in r]
    line = f"{path.name}: {len(recs)} shapes"
    if timed:
        parts = {k: sum(t[k] for t in timed) for k in ("env", "agent", "setup", "search", "total")}
        line += " | job seconds " + " ".join(f"{k}={v:.0f}" for k, v in parts.items())
        line += f" | median total {statistics.median(t['total'] for t in timed):.2f}s"
    print(line)
EOF
cp -r kernels/tables $W/; cp -r "$STATE" $W/state
tar czf "$OUT/tune.tar.gz" -C $W tables tables_$OTHER state logs $( [ -d $W/eval ] && echo eval )
say "done t=$(el)"
