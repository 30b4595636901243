#!/usr/bin/env bash
# Session 15, call 1 (nvidia-h200): the wide cluster split-K tiles (set splitk_cluster_wide: 128x256 s3 and 128x192 s4
# over two consumer warpgroups, written in session 14, never run), and the long-K shapes session 14's tuning deadline
# cut.
#  1. build splitk_cluster and splitk_cluster_wide here (40 variants, nvcc, 16 jobs) and pack the objects for the
#     later calls (objects built on the GPU host load on the GPU host);
#  2. the kernel GPU suite over the wide variants (fp64 reference, zero-one, NaN-poisoned outputs, every split count,
#     graphs, two streams, PDL chains, moving operands); if it fails, the tuning below leaves the wide set out;
#  3. exhaustive-ish tuning against cuBLAS in the same run, per accumulator and layout:
#     a. cluster_rest_<acc>_<layout>.txt (the shapes of long_k_few_tiles.txt that session 14's calls 1 and 2 did not
#        both reach: the largest outputs) over splitk_cluster + splitk_cluster_wide (50 arms, 30 trials: the agent);
#     b. wide_<acc>_<layout>.txt (the other shapes with M*N >= 131072) over splitk_cluster_wide alone (10 arms, all).
#     Deadlines shrink so that the whole call ends before ~575 s.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s15
timeout 240 python3 -m kernels.build --set splitk_cluster,splitk_cluster_wide --jobs 16 \
  --pack $OUT/kernel_cache_cluster_h200.tar.gz > $OUT/build.txt 2>&1
echo "build rc=$? at $(el)s: $(grep total: $OUT/build.txt | tail -1)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk_cluster_wide timeout 90 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_wide.txt 2>&1
rc=$?
echo "kernel suite (splitk_cluster_wide) rc=$rc at $(el)s: $(tail -1 $OUT/gpu_kernels_wide.txt)" >> $OUT/rc.txt
REST_SET=splitk_cluster,splitk_cluster_wide; [ $rc -eq 0 ] || REST_SET=splitk_cluster
W=/tmp/s15c1; mkdir -p $W/logs
runs=("rest fp32 col" "rest fp16 col" "rest fp32 row" "rest fp16 row")
[ $rc -eq 0 ] && runs+=("wide fp32 col" "wide fp16 col" "wide fp32 row" "wide fp16 row")
left=${#runs[@]}
for run in "${runs[@]}"; do
  set -- $run
  if [ $1 = rest ]; then vs=$REST_SET; grid=$S/cluster_rest_${2/fp/f}_$3.txt; trials=30; want=50
  else vs=splitk_cluster_wide; grid=$S/wide_${2/fp/f}_$3.txt; trials=10; want=55; fi
  share=$(( (575 - $(el)) / left - 12 )); dl=$(( share < want ? share : want )); left=$((left - 1))
  [ $dl -lt 10 ] && { echo "skip $run at $(el)s: no time" >> $OUT/rc.txt; continue; }
  timeout $(( dl + 20 )) python3 -m tuner.tune --env gpu --grid $grid --acc $2 --b-layout $3 --gpus 0 \
    --variant-set $vs --lt-arms 0 --lt-sweep-us 0 --budget-trials $trials --budget-seconds 3 --deadline-seconds $dl \
    --state-dir $W/$1 --tables-dir $W/tables_$1 --min-speedup 1.0 --objective kernel > $W/logs/tune_$1_$2_$3.log 2>&1
  echo "tune $run (deadline $dl s) rc=$? at $(el)s: $(wc -l < $W/$1/finished_${2/fp/f}_$3.jsonl) of $(wc -l < $grid)" >> $OUT/rc.txt
done
tar czf $OUT/tune.tar.gz -C $W .
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)|Error|error" $OUT/gpu_kernels_wide.txt | head -30
for f in $W/logs/*.log; do echo "== $f"; tail -c 300 $f; echo; done
