#!/usr/bin/env bash
# Session 14, call 3 (nvidia-h200): the tables with calls 1 and 2's splitk cluster records merged (SPLITK_CLUSTER in
# tuner/committed_tables.py; CAND = kernels/tables of this tree) against the tables before (BASE=.carry5/base_tables:
# the committed tables of 083de5a), on every entry that changed (cluster_changed_<acc>_<layout>.txt), both roles,
# B col-major then row-major. First the correctness suites: the 32 splitk_cluster variants, and the fast path /
# dispatch / cuBLAS suites over the new tables. Objects come as packs built on the CPU box (.carry1: the tables'
# variants before; .carry4: splitk_cluster).
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set splitk_cluster,tables --tables .carry5/base_tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=splitk_cluster,splitk timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels_splitk_cluster.txt 2>&1
echo "kernel suite (splitk_cluster,splitk: the splitk ones the packs hold) at $(el)s: $(tail -1 $OUT/gpu_kernels_splitk_cluster.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
S=benchmarks/h200-2026-12-02-s14
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=kernels/tables BASE=.carry5/base_tables SHAPES_fp32=$S/cluster_changed_f32_$layout.txt \
    SHAPES_fp16=$S/cluster_changed_f16_$layout.txt B_LAYOUT=$layout DEADLINE=${AB_DEADLINE:-60} BENCH_S=0.2 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_console_$layout.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
cat $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
