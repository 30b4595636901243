#!/usr/bin/env bash
# Session 14, call 1 (nvidia-h200): split-K across a cluster (splitk schedule "cluster",
# kernels/codegen/splitk_cluster.cu.tmpl), new this session.
#  1. build the 16 variants of set splitk_cluster here (nvcc, 16 jobs);
#  2. the kernel GPU suite over them (fp64 reference, zero-one, NaN-poisoned outputs, every split count, graphs,
#     two streams, PDL chains, moving operands);
#  3. an exhaustive tuning run of those variants alone (4 tiles x 5 split counts, no cuBLASLt arms) over the grid
#     shapes with few output tiles and a long K (tuner/grids/long_k_few_tiles.txt), against cuBLAS in the same run:
#     f32 col and row first, then f16 col and row.
set -u
source scripts/device_prologue.sh
timeout 300 python3 -m kernels.build --set splitk_cluster --jobs 16 > $OUT/build.txt 2>&1
echo "build rc=$? at $(el)s: $(tail -1 $OUT/build.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk_cluster timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -x \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_splitk_cluster.txt 2>&1
echo "kernel suite (splitk_cluster) rc=$? at $(el)s: $(tail -1 $OUT/gpu_kernels_splitk_cluster.txt)" >> $OUT/rc.txt
W=/tmp/s14c1; mkdir -p $W/logs
for run in "fp32 col" "fp32 row" "fp16 col" "fp16 row"; do
  set -- $run
  timeout $(( ${DEADLINE:-60} + 40 )) python3 -m tuner.tune --env gpu --grid tuner/grids/long_k_few_tiles.txt \
    --acc $1 --b-layout $2 --gpus 0 --variant-set splitk_cluster --lt-arms 0 --lt-sweep-us 0 --budget-trials 20 \
    --budget-seconds 3 --deadline-seconds ${DEADLINE:-60} --state-dir $W/splitk_cluster --tables-dir $W/tables \
    --min-speedup 1.0 --objective kernel > $W/logs/tune_$1_$2.log 2>&1
  echo "tune $1 $2 rc=$? at $(el)s: $(wc -l < $W/splitk_cluster/finished_${1/fp/f}_$2.jsonl) records" >> $OUT/rc.txt
done
tar czf $OUT/tune_splitk_cluster.tar.gz -C $W splitk_cluster tables logs
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)|Error|error" $OUT/gpu_kernels_splitk_cluster.txt | head -30
tail -5 $OUT/build.txt
for f in $W/logs/*.log; do echo "== $f"; tail -c 400 $f; echo; done
