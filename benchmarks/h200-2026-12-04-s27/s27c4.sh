#!/usr/bin/env bash
# Session 27, call 4: (1) which cuBLAS kernels run for B row-major (NN: the col grid's torch.matmul) and column-major
# (TN) on skinny memory-bound f32 shapes (nn_vs_tn_kernels.py); (2) the service and tuner GPU suites at this commit.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-04-s27
timeout 120 python3 $S/nn_vs_tn_kernels.py $OUT/nn_vs_tn.json > $OUT/nn_vs_tn.txt 2>&1
echo "nn_vs_tn rc=$? at $(el)s" >> $OUT/rc.txt
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider tests/service tests/tuner > $OUT/gpu_service_tuner.txt 2>&1
echo "service + tuner GPU suites rc=$?: $(tail -1 $OUT/gpu_service_tuner.txt) at $(el)s" >> $OUT/rc.txt
grep -E "FAILED|Error" $OUT/gpu_service_tuner.txt | head -10 >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt $OUT/nn_vs_tn.txt
pack_out ${CALL:-call4}
