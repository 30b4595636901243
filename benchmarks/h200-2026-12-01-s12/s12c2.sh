#!/usr/bin/env bash
# Session 12, call 2 (nvidia-h200): B row-major tuning, objective `call`, variant set tables_row.
#  1. the kernel GPU suite over tables_row;
#  2. the rest of session 10's row tuning (its records resumed: the largest 83 f32 / 102 f16 grid shapes), every
#     cuBLASLt rank first for shapes whose cuBLAS kernel takes >= 10 us (--lt-sweep-us 10; session 10 used 100);
#  3. a cuBLASLt sweep over the row shapes session 10 tuned whose cuBLAS kernel took 10-100 us (those above were
#     swept then) and which had not timed all 8 ranks, slowest first (sweep_row_<acc>.txt: 266 f32 / 353 f16):
#     all 8 ranks the NN heuristic returns, nothing else (--budget-trials 3 --lt-arms 8 --lt-sweep-us 1; a later
#     --budget-seconds wins over the first), a run of
#     its own that retable merges on the base run's cuBLAS scale. Why: session 11's row grid measured the row entries
#     at 0.971x of cuBLASLt autotuning (f32, cuBLAS 30-100 us), where tuning had timed only 3 of the 8 ranks.
set -u
source scripts/device_prologue.sh
HGEMM_TEST_SET=tables_row timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=110 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_row.txt 2>&1
echo "kernel suite (tables_row) at $(el)s: $(tail -1 $OUT/gpu_kernels_row.txt)" >> $OUT/rc.txt
S10=benchmarks/h200-2026-12-01-s10/tune_row; S12=benchmarks/h200-2026-12-01-s12; W=/tmp/s12c2; mkdir -p $W/rest $W/sweep $W/logs
for f in $S10/finished_*.jsonl.gz; do gunzip -c $f > $W/rest/$(basename $f .gz); done
tune() {  # acc state grid deadline extra-args...
  local acc=$1 state=$2 grid=$3 deadline=$4; shift 4
  timeout $(( deadline + 60 )) python3 -m tuner.tune --env gpu --grid $grid --acc $acc --b-layout row --gpus 0 \
    --variant-set tables_row --budget-seconds 0.4 --deadline-seconds $deadline --state-dir $state \
    --tables-dir $W/tables_$(basename $state) --min-speedup 1.01 --objective call "$@" \
    > $W/logs/$(basename $state)_$acc.log 2>&1
  echo "tune $acc $(basename $state) rc=$? at $(el)s: $(wc -l < $state/finished_${acc/fp/f}_row.jsonl) records" >> $OUT/rc.txt
}
tune fp32 $W/rest $S10/grid.txt 110 --budget-trials 12 --lt-sweep-us 10
tune fp16 $W/rest $S10/grid.txt 120 --budget-trials 12 --lt-sweep-us 10
tune fp32 $W/sweep $S12/sweep_row_f32.txt 130 --budget-trials 3 --lt-arms 8 --lt-sweep-us 1 --budget-seconds 3
tune fp16 $W/sweep $S12/sweep_row_f16.txt 130 --budget-trials 3 --lt-arms 8 --lt-sweep-us 1 --budget-seconds 3
tar czf $OUT/tune_row.tar.gz -C $W rest sweep logs
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
for f in $W/logs/*.log; do echo "== $f"; tail -c 600 $f; echo; done
