#!/usr/bin/env bash
# Session 16, call 1 (nvidia-h200): B multicast in cluster split-K (set splitk_cluster_mc, written in session 15,
# never run).
#  1. build splitk_cluster and splitk_cluster_mc here (56 variants, nvcc, 16 jobs) and pack the objects for later calls;
#  2. the kernel GPU suite over the multicast variants and the one-M-tile cluster ones (their template changed, their
#     device code did not), under a timeout: a synchronization mistake hangs;
#  3. if it passes: both sets compete in one tuning run per accumulator and layout over long_k_two_mtiles.txt (the 162
#     shapes of long_k_few_tiles.txt with M >= 128, where a cluster of 2 M-tiles fits), kernel objective, against
#     cuBLAS; the trials say per shape whether the multicast arms beat the one-M-tile ones.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s16
timeout 300 python3 -m kernels.build --set splitk_cluster,splitk_cluster_mc --jobs 16 \
  --pack $OUT/kernel_cache_cluster_mc_h200.tar.gz > $OUT/build.txt 2>&1
echo "build rc=$? at $(el)s: $(grep total: $OUT/build.txt | tail -1)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk_cluster_mc timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -x \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_mc.txt 2>&1
rc=$?
echo "kernel suite (splitk_cluster_mc) rc=$rc at $(el)s: $(tail -1 $OUT/gpu_kernels_mc.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk_cluster timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_cluster.txt 2>&1
echo "kernel suite (splitk_cluster) rc=$? at $(el)s: $(tail -1 $OUT/gpu_kernels_cluster.txt)" >> $OUT/rc.txt
W=/tmp/s16c1; mkdir -p $W/logs
if [ $rc -eq 0 ]; then
  left=4
  for run in "fp32 col" "fp16 col" "fp32 row" "fp16 row"; do
    set -- $run
    dl=$(( (570 - $(el)) / left - 10 )); left=$((left - 1))
    [ $dl -lt 10 ] && { echo "skip $run at $(el)s: no time" >> $OUT/rc.txt; continue; }
    timeout $(( dl + 20 )) python3 -m tuner.tune --env gpu --grid $S/long_k_two_mtiles.txt --acc $1 --b-layout $2 \
      --gpus 0 --variant-set splitk_cluster,splitk_cluster_mc --lt-arms 0 --lt-sweep-us 0 --budget-trials 40 \
      --budget-seconds 3 --deadline-seconds $dl --state-dir $W/mc --tables-dir $W/tables_mc --min-speedup 1.0 \
      --objective kernel > $W/logs/tune_mc_$1_$2.log 2>&1
    echo "tune $run (deadline $dl s) rc=$? at $(el)s: $(wc -l < $W/mc/finished_${1/fp/f}_$2.jsonl) of $(wc -l < $S/long_k_two_mtiles.txt)" >> $OUT/rc.txt
  done
fi
tar czf $OUT/tune.tar.gz -C $W .
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)|Error|error|Timeout" $OUT/gpu_kernels_mc.txt | head -30
tail -n 5 $OUT/gpu_kernels_cluster.txt
for f in $W/logs/*.log; do echo "== $f"; tail -c 300 $f; echo; done
