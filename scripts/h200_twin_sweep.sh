#!/usr/bin/env bash
# The twin sweep on the H200 (tuner/twin_sweep.py, docs/tuner.md): per accumulator, the variants its list names for
# each shape timed beside the committed tables' choices (ours) in one interleaved run, B row-major, against
# torch.matmul and cuBLAS NN; then tuner.confirm on a copy of the tables says how many choices the run would correct.
#   OUT=dir LIST_fp32=file LIST_fp16=file [ACCS="fp32 fp16"] [DEADLINE=300] [BENCH_S=0.2] [B_LAYOUT=row] \
#     [TABLES=dir] [TIMING=both|kernel] bash scripts/h200_twin_sweep.sh
# TABLES: the tables whose choices are `ours` (default kernels/tables; a candidate not yet committed).
# DEADLINE_<acc> (e.g. DEADLINE_fp16) overrides DEADLINE for one accumulator. B_LAYOUT=col sweeps the col entries
# (`python -m tuner.twin_sweep --layout col`) against cuBLAS TN.
# LIST_<acc>: lines 'M_N_K NAME[,NAME]' (python -m tuner.twin_sweep --out). The variants must be built (the tables and
# tables_row packs). Returns summary.txt and sweep.tar.gz (per accumulator: results.json/csv, log, the confirmed copy;
# tables/: the tables the run measured, for tuner.confirm's --run ACC=RESULTS,TABLE).
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
W=/tmp/h200_twin_sweep; rm -rf $W; mkdir -p $W/tables; cp ${TABLES:-kernels/tables}/*.json $W/tables/
[ -n "${SKIP_ENV:-}" ] || source scripts/device_env.sh
LAYOUT=${B_LAYOUT:-row}; [ $LAYOUT = row ] && NB=cuBLAS-nn || NB=cuBLAS-tn
for acc in ${ACCS:-fp32 fp16}; do
  list_var=LIST_$acc; list=${!list_var:?set $list_var to a file of 'M_N_K NAME[,NAME]' lines}
  a=f${acc#fp}
  cut -d' ' -f1 "$list" > $W/grid_$acc.txt
  dl_var=DEADLINE_$acc
  timeout --signal=INT --kill-after=20 "${!dl_var:-${DEADLINE:-300}}" ./eval_one_file.sh --grid $W/grid_$acc.txt \
    --acc_precise $acc --b_layout $LAYOUT --tables $W/tables --also_variants_per_shape "$list" \
    --baselines torch.matmul,$NB \
    --warmup_seconds ${WARMUP_S:-0.05} --benchmark_seconds ${BENCH_S:-0.2} --timing ${TIMING:-both} --base_dir $W/$acc \
    --gpu_device_id 0 --mode offline > $W/$acc.log 2>&1
  echo "$acc rc=$? at ${SECONDS}s" | tee -a "$OUT/summary.txt"
  if [ -f $W/$acc/results.json ]; then
    python3 -m tuner.confirm --table $W/tables/sm90_$a.json --run $a=$W/$acc/results.json,$W/tables/sm90_$a.json \
      --out $W/confirmed_sm90_$a.json 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
  fi
done
tar czf "$OUT/sweep.tar.gz" -C $W .
