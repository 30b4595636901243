#!/usr/bin/env bash
# Session 27, call 2: (1) the workspace hazard shown: a graph captured with a stream's workspace, the stream's buffer
# outgrown, the launcher moved to another stream — with kernels.runtime's retention of outgrown buffers switched off
# (expect the test to fail: the bystander tensor gets the freed block, the replay writes into it), then on (expect a
# pass); (2) a process whose first GEMM is captured, per kind of captured choice (sm90, splitk, cublas, cublaslt);
# (3) the GPU suites over the committed tables (with col round 7 / row round 10 on).
set -u
source scripts/device_prologue.sh
HGEMM_TEST_SET=tables timeout 120 python3 - > $OUT/hazard_off.txt 2>&1 <<'PY'
import sys, pytest
import kernels.runtime as r
class Dropped(list):
    def append(self, item):  # the old behaviour: an outgrown workspace is dropped (freed once unreferenced)
        pass
r._outgrown = Dropped()
sys.exit(pytest.main(["-m", "gpu", "-q", "-p", "no:cacheprovider", "tests/kernels/test_gpu_kernels.py", "-k", "outgrows"]))
PY
echo "hazard, retention off rc=$? at $(el)s: $(tail -1 $OUT/hazard_off.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_gpu_kernels.py \
  -k "outgrows or split_scratch" > $OUT/hazard_on.txt 2>&1
echo "hazard, retention on rc=$? at $(el)s: $(tail -1 $OUT/hazard_on.txt)" >> $OUT/rc.txt
OUT=$OUT SET=tables KERNEL_S=${KERNEL_S:-300} DISPATCH_S=200 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
grep -E "FAILED|first_gemm|Error" $OUT/gpu_dispatch.txt | head -20 >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call2}
