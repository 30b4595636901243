#!/usr/bin/env bash
# Session 42, call 3 (an H100, or on the H200 the suites and session 41's floor recheck; carry .whl .carry7
# .carry3 .carry8): the dispatch suites again after eval_cli stopped switching
# autograd off for the whole process (call 2's two torch_op backward failures), torch.ops.hgemm.gemm's host cost beside
# kernels.gemm (kernels.overhead), then the f16 H100 overlay grown by call 2's col grid A/B'd, col only.
#   HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-05-s42/call3.sh        # ~300 s
set -u
source scripts/device_prologue.sh
OUT=$OUT SET=tables KERNEL_S=60 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
for shape in 256x512x1024 4096x4096x4096; do
  timeout 60 python3 -m kernels.overhead --shape $shape --calls 3000 > $OUT/overhead_$shape.txt 2>&1
  echo "overhead $shape rc=$? at $(el)s" >> $OUT/rc.txt
done
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then   # the plan's call 2 instead (docs/notes.md)
  mkdir -p $OUT/recheck; OUT=$OUT/recheck END=${END:-400} CALL=recheck bash benchmarks/h200-2026-12-05-s41/floor_recheck.sh \
    > /tmp/recheck_console.txt 2>&1
  echo "floor recheck rc=$? at $(el)s" >> $OUT/rc.txt
  cat $OUT/rc.txt; tail -3 $OUT/gpu_dispatch.txt; tail -12 $OUT/recheck/rc.txt
  pack_out ${CALL:-call3}; exit 0
fi
mkdir -p $OUT/ab; OUT=$OUT/ab LAYOUTS=col ACCS=fp16 AB_DL=${AB_DL:-70} CALL=ab bash benchmarks/h100-2026-12-05-s38/overlay_ab.sh \
  > /tmp/ab_console.txt 2>&1
echo "overlay ab rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/rc.txt; tail -3 $OUT/gpu_dispatch.txt; tail -25 $OUT/overhead_*.txt; cat $OUT/ab/rc.txt | tail -8
pack_out ${CALL:-call3}
