#!/usr/bin/env bash
# Session 16, call 2 (nvidia-h200): the A/B prepared in session 15, and host costs.
#  1. kernels.overhead at three shapes (host time per call by path, operands rotated over 64 sets): the host-cost
#     model of the call objective (tuner/objective.py HOST_US_H200) dates from session 2;
#  2. A/B of the candidate tables (.carry6/cand_tables: `python -m tuner.committed_tables --confirm-rounds 3
#     --pdl-alone-factor 1.6 --host-us cublas=20,cublaslt=20`: eager choices may take PDL-only variants costed 1.6x
#     their back-to-back time; a cuBLAS arm's call costs 12 us more than sm90's instead of 4, as session 15's grids
#     measured; the col corrections' round 3) against the committed ones on 70 of the changed entries per accumulator
#     and layout (ab_sample_<acc>_<layout>.txt, of cand_h20_changed_*: 136 / 157 col, 100 / 158 row), both roles,
#     col then row.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s16
python3 -m kernels.build --tables committed,.carry6/cand_tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
for spec in "64x64x4096 f32" "128x128x256 f32" "256x1024x512 f16" "64x64x4096 f32"; do
  set -- $spec
  timeout 40 python3 -m kernels.overhead --shape $1 --acc $2 --set tables --rotate 64 >> $OUT/overhead.txt 2>&1
  echo "overhead $spec rc=$? at $(el)s" >> $OUT/rc.txt
done
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=.carry6/cand_tables SHAPES_fp32=$S/ab_sample_f32_$layout.txt SHAPES_fp16=$S/ab_sample_f16_$layout.txt \
    B_LAYOUT=$layout DEADLINE=${AB_DEADLINE:-48} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console_$layout.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
grep -E "^NVIDIA|C fast path|kernels.gemm \(cached|torch.matmul" $OUT/overhead.txt
