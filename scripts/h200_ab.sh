#!/usr/bin/env bash
# Candidate tables against the committed ones on the H200, both roles in one call (tuner/ab.py says why):
#   OUT=dir CAND=dir/with/sm90_<acc>.json SHAPES_fp32=file SHAPES_fp16=file [ACCS="fp32 fp16"] [DEADLINE=150]
#     [B_LAYOUT=row] [BASE=dir] bash scripts/h200_ab.sh
# For each accumulator: A (ours = CAND, ours[committed] = BASE) and B (ours = BASE, ours[cand] = CAND); BASE defaults
# to kernels/tables (the tables as committed; another folder when the candidate is already committed)
# on that accumulator's M_N_K list, torch.matmul alongside; then `python -m tuner.ab` prints the table.
# Returns summary.txt and ab.tar.gz (both runs' results per accumulator).
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
ACCS=${ACCS:-"fp32 fp16"}; W=/tmp/h200_ab; rm -rf $W; mkdir -p $W/committed
[ -n "${SKIP_ENV:-}" ] || source scripts/device_env.sh
mkdir -p .cache/hgemm
for f in .carry/kernel_cache*.tar.gz; do [ -f "$f" ] && tar xzf "$f" -C .cache/hgemm; done
cp ${BASE:-kernels/tables}/*.json $W/committed/
runs=()
for acc in $ACCS; do
  shapes_var=SHAPES_$acc; shapes=${!shapes_var:?set $shapes_var to an M_N_K file}
  for role in A B; do
    if [ $role = A ]; then X=(--tables "$CAND" --also_tables committed=$W/committed)
    else X=(${BASE:+--tables $W/committed} --also_tables cand="$CAND"); fi
    timeout --signal=INT --kill-after=20 "${DEADLINE:-150}" ./eval_one_file.sh --grid "$shapes" --acc_precise $acc \
      --warmup_seconds ${WARMUP_S:-0.05} --benchmark_seconds ${BENCH_S:-0.2} --base_dir $W/${acc}_$role \
      --gpu_device_id 0 --mode offline --timing both --baselines torch.matmul ${B_LAYOUT:+--b_layout $B_LAYOUT} \
      "${X[@]}" > $W/${acc}_$role.log 2>&1
    echo "$acc $role rc=$? at ${SECONDS}s" | tee -a "$OUT/summary.txt"
    [ -f $W/${acc}_$role/results.json ] && runs+=($W/${acc}_$role)
  done
done
[ ${#runs[@]} -gt 0 ] && python3 -m tuner.ab "${runs[@]}" | tee -a "$OUT/summary.txt"
tar czf "$OUT/ab.tar.gz" -C $W --exclude=committed .
