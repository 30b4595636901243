#!/usr/bin/env bash
# Session 26, call 3: call 2's CUDA error log showed cuMemFree_v2 refused inside ours' capture (900, then 901 at
# cuStreamEndCapture) on exactly the shapes whose table `graph` choice is cuBLAS GemmEx (our arms, its handle rebound
# to the capture stream). HGEMM_ARMS_RELAXED_SCOPE (an experiment knob in arms.cu): 0 = as before, 1 = the handle
# binding (cublasSetStream + cublasSetWorkspace) runs with the thread's capture mode relaxed, 2 = the whole call.
# Plus a native backtrace of that cuMemFree when gdb is there.
set -u
source scripts/device_prologue.sh
for scope in 0 1 2; do
  HGEMM_ARMS_RELAXED_SCOPE=$scope CUDA_LOG_FILE=$OUT/cuda_log_$scope.txt timeout --signal=INT 100 python3 \
    benchmarks/h200-2026-12-04-s26/capture_diag.py f32 row torch.matmul,cuBLASLt-auto-tuning-nn global ${NSHAPES:-16} \
    $OUT/diag_scope$scope.json > $OUT/diag_scope$scope.txt 2>&1
  echo "scope $scope rc=$? at $(el)s: $(grep captures, $OUT/diag_scope$scope.txt)" >> $OUT/rc.txt
  echo "   cuMemFree refusals: $(grep -c 'from cuMemFree' $OUT/cuda_log_$scope.txt)" >> $OUT/rc.txt
done
if command -v gdb > /dev/null; then
  cat > /tmp/bt.gdb <<'G'
set pagination off
set breakpoint pending on
set print thread-events off
break cuMemFree_v2
commands
bt 30
continue
end
run
G
  HGEMM_ARMS_RELAXED_SCOPE=0 timeout 200 gdb -batch -x /tmp/bt.gdb --args python3 \
    benchmarks/h200-2026-12-04-s26/capture_diag.py f32 row torch.matmul,cuBLASLt-auto-tuning-nn global 4 /tmp/gdb.json \
    > $OUT/gdb.txt 2>&1
  echo "gdb rc=$? at $(el)s" >> $OUT/rc.txt
  grep -n "^#" $OUT/gdb.txt | grep -v "^.*#0 " | awk '{$1=""; print}' | sed 's/0x[0-9a-f]* in //' | cut -c1-150 | sort | uniq -c | sort -rn | head -25 >> $OUT/rc.txt
else
  echo "no gdb" >> $OUT/rc.txt
fi
cat $OUT/rc.txt
