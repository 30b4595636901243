#!/usr/bin/env bash
# Session 13, call 2 (nvidia-h200): the splitk family again, now on the pingpong kernel (call 1 ran it on KernelTma).
#  1. the kernel GPU suite over the 16 splitk variants (fp64 reference, zero-one, knobs, graphs, PDL chains, moving
#     operands, and the scratch left zeroed across shapes, split counts, two streams and a capture);
#  2. an exhaustive tuning run of the splitk variants alone (4 tiles x 6 split counts = 24 arms, no cuBLASLt arms)
#     over the 204 grid shapes with few output tiles and a long K (tuner/grids/long_k_few_tiles.txt), each
#     accumulator and layout, against cuBLAS measured in the same run: its records join the table records later.
set -u
source scripts/device_prologue.sh
HGEMM_TEST_SET=splitk timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=190 -x \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_splitk.txt 2>&1
echo "kernel suite (splitk) at $(el)s: $(tail -1 $OUT/gpu_kernels_splitk.txt)" >> $OUT/rc.txt
W=/tmp/s13c2; mkdir -p $W/logs
for run in "fp32 row" "fp16 row" "fp32 col" "fp16 col"; do
  set -- $run
  timeout $(( ${DEADLINE:-65} + 40 )) python3 -m tuner.tune --env gpu --grid tuner/grids/long_k_few_tiles.txt \
    --acc $1 --b-layout $2 --gpus 0 --variant-set splitk --lt-arms 0 --lt-sweep-us 0 --budget-trials 24 \
    --budget-seconds 3 --deadline-seconds ${DEADLINE:-65} --state-dir $W/splitk --tables-dir $W/tables \
    --min-speedup 1.0 --objective kernel > $W/logs/tune_$1_$2.log 2>&1
  echo "tune $1 $2 rc=$? at $(el)s: $(wc -l < $W/splitk/finished_${1/fp/f}_$2.jsonl) records" >> $OUT/rc.txt
done
tar czf $OUT/tune_splitk.tar.gz -C $W splitk tables logs
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)|Error|error" $OUT/gpu_kernels_splitk.txt | head -30
for f in $W/logs/*.log; do echo "== $f"; tail -c 700 $f; echo; done
