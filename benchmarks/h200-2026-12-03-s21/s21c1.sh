#!/usr/bin/env bash
# Session 21, call 1 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack) + .carry3/cand21 =
# `python -m tuner.committed_tables --confirm-rounds 6 --confirm-row-rounds 9 --out-dir .carry3/cand21`: col round 6 =
# session 20's col grid, row round 9 = session 20's row grid, on the committed tables):
#  1. the fast-path tensor reader (session 20, never run on the H200): built by the prologue against torch 2.11
#     (env.txt); the fast-path / tensor-reader / dispatch / cuBLAS / eval / launch-anatomy GPU suites;
#  2. its host time: kernels.overhead (C fast path with the reader vs through Python attributes vs the Python path,
#     same process) and tuner.call_anatomy with ours[attributes] / ours[off] beside ours (same run, interleaved);
#  3. 2048x64x16384 row f32: ours (committed: cuBLASLt), ours[nn] (session 20's candidate: cuBLAS NN), cuBLAS-nn and
#     torch.matmul in one run (session 20's A/B had the dispatcher's cuBLAS NN 8% behind the cuBLAS-nn baseline);
#  4. cand21 against the committed tables on every entry it changes (f16 only: 76 col, 35 row), both roles.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s21; C=$PWD/.carry3/cand21
python3 -m kernels.build --tables committed,$C --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/kernels/test_fastpath.py \
  tests/kernels/test_tensor_reader.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py \
  tests/tuner/test_gpu_eval.py tests/kernels/test_launch_anatomy.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites rc=$? at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
for spec in "64x4096x64 col f32" "512x512x1024 col f32" "512x512x1024 row f16"; do
  set -- $spec
  timeout 60 python3 -m kernels.overhead --shape $1 --b-layout $2 --acc $3 --set tables --rotate 64 --calls 1500 \
    >> $OUT/overhead.txt 2>&1
  echo "overhead $spec rc=$? at $(el)s" >> $OUT/rc.txt
done
SH=64_128_64,64_4096_64,256_256_256,512_512_1024,128_8192_512,1024_1024_1024,2048_2048_2048
timeout 90 python3 -m tuner.call_anatomy --shapes $SH --acc f32 --b-layout col --fast-paths attributes,off --seconds 0.6 \
  --out $OUT/anatomy_f32_col.json > $OUT/anatomy_f32_col.txt 2>&1
echo "call_anatomy f32 col rc=$? at $(el)s" >> $OUT/rc.txt
timeout 60 python3 -m tuner.call_anatomy --shapes 64_128_64,256_256_256,512_512_1024,1024_1024_1024 --acc f16 --b-layout row --fast-paths attributes --seconds 0.6 \
  --out $OUT/anatomy_f16_row.json > $OUT/anatomy_f16_row.txt 2>&1
echo "call_anatomy f16 row rc=$? at $(el)s" >> $OUT/rc.txt
mkdir -p /tmp/cand20 && for f in benchmarks/h200-2026-12-03-s20/call1/cand_tables/*.gz; do
  gunzip -c $f > /tmp/cand20/$(basename $f .gz); done
timeout 60 ./eval_one_file.sh --mnk 2048_64_16384 --b_layout row --acc_precise fp32 --warmup_seconds 0.2 \
  --benchmark_seconds 1 --base_dir $OUT/diag_2048_64_16384 --gpu_device_id 0 --mode offline --timing both \
  --baselines torch.matmul,cuBLAS-nn,cuBLASLt-heuristic-nn --also_tables nn=/tmp/cand20 > $OUT/diag.txt 2>&1
echo "diag 2048x64x16384 rc=$? at $(el)s" >> $OUT/rc.txt
OUT=$OUT/ab_col CAND=$C SHAPES_fp16=$S/ab_f16_col.txt ACCS=fp16 DEADLINE=${AB_COL_DL:-65} \
  BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_col_console.txt 2>&1
echo "ab col rc=$? at $(el)s" >> $OUT/rc.txt
OUT=$OUT/ab_row CAND=$C SHAPES_fp16=$S/ab_f16_row.txt ACCS=fp16 B_LAYOUT=row DEADLINE=${AB_ROW_DL:-50} \
  BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_row_console.txt 2>&1
echo "ab row rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt $OUT/overhead.txt $OUT/anatomy_f32_col.txt $OUT/anatomy_f16_row.txt
tail -25 $OUT/diag.txt; grep -v " rc=" $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
pack_out call1
