#!/usr/bin/env bash
# Session 13, call 5 (nvidia-h200): an experiment for the next session, nothing of it in the tables. Deeper-pipelined
# splitk variants (set splitk_deep: 8 and 12 stages of 64x64x64, 64x64x128 with 6, 128x64 and 64x128 with 8, beside
# the four committed 4-stage ones; f32 only): the GPU suite, then an exhaustive tuning run of all nine tiles x 6 split
# counts over tuner/grids/long_k_few_tiles.txt, f32 row then col, to see whether the mid-size long-K shapes move.
set -u
source scripts/device_prologue.sh
HGEMM_TEST_SET=splitk_deep timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=110 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_splitk_deep.txt 2>&1
echo "kernel suite (splitk_deep) at $(el)s: $(tail -1 $OUT/gpu_kernels_splitk_deep.txt)" >> $OUT/rc.txt
W=/tmp/s13c5; mkdir -p $W/logs
for layout in row col; do
  timeout $(( ${DEADLINE:-75} + 40 )) python3 -m tuner.tune --env gpu --grid tuner/grids/long_k_few_tiles.txt \
    --acc fp32 --b-layout $layout --gpus 0 --variant-set splitk_deep --lt-arms 0 --lt-sweep-us 0 --budget-trials 54 \
    --budget-seconds 6 --deadline-seconds ${DEADLINE:-75} --state-dir $W/splitk_deep --tables-dir $W/tables \
    --min-speedup 1.0 --objective kernel > $W/logs/tune_fp32_$layout.log 2>&1
  echo "tune fp32 $layout rc=$? at $(el)s: $(wc -l < $W/splitk_deep/finished_f32_$layout.jsonl) records" >> $OUT/rc.txt
done
tar czf $OUT/tune_splitk_deep.tar.gz -C $W splitk_deep logs
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
