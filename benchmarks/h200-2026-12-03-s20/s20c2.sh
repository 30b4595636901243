#!/usr/bin/env bash
# Session 20, call 2 (nvidia-h200, carry .whl + .carry1 + .carry2 + .carry3/cand20, right after call 1): the full row
# grid of the committed tables (c427508), shuffled (session 11's order, so its first shapes are sessions 18-19's), f32
# then f16, against torch.matmul and cuBLAS NN, deadlines from the time left (END). Written to measure cand20 (copied
# over kernels/tables in the device's copy of the tree); after call 1's A/B the call ran with that copy off, as
# `HGEMM_COMMIT=c427508 END=575 bash benchmarks/h200-2026-12-03-s20/s20c2.sh` (the copy is CAND20=1 now).
set -u
source scripts/device_prologue.sh
[ -n "${CAND20:-}" ] && cp .carry3/cand20/sm90_*.json kernels/tables/  # CAND20=1: the grid of cand20
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
DL=$(( (${END:-570} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=row DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn STATE=/tmp/s20c2_row SKIP_ENV=1 bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid row (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing|shapes" $OUT/grid_row/summary.txt | head -40
pack_out call2
