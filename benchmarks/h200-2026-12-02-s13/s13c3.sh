#!/usr/bin/env bash
# Session 13, call 3 (nvidia-h200): the splitk family on KernelTma (as call 1 tuned it), and the A/B of the tables
# that merge call 1's splitk records (CAND=.carry/cand_splitk: `python -m tuner.committed_tables` with SPLITK added to
# RECORDS and ROW_RECORDS) against the committed ones, on every entry that changed (splitk_changed_<acc>_<layout>.txt:
# graph choices only), both roles, B col-major then row-major.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set splitk,tables,tables_row --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=110 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_splitk.txt 2>&1
echo "kernel suite (splitk) at $(el)s: $(tail -1 $OUT/gpu_kernels_splitk.txt)" >> $OUT/rc.txt
S=benchmarks/h200-2026-12-02-s13
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=.carry/cand_splitk SHAPES_fp32=$S/splitk_changed_f32_$layout.txt \
    SHAPES_fp16=$S/splitk_changed_f16_$layout.txt B_LAYOUT=$layout DEADLINE=${AB_DEADLINE:-55} BENCH_S=0.2 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_console_$layout.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
cat $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
