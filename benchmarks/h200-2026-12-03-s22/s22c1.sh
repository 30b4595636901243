#!/usr/bin/env bash
# Session 22, call 1 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2/kernel_cache_skinny.tar.gz (the
# skinny set: 32 col variants, 28 new, built on the CPU box)):
#  1. the skinny variants' kernel suite (random-normal vs fp64, zero-one, graphs, per variant and shape class) and
#     the fast-path / tensor-reader / dispatch / cuBLAS / eval / launch-anatomy suites — session 21's C++ output
#     allocator (`hgemm_new_matrix`) never ran on the H200;
#  2. its host time: kernels.overhead, "kernels.gemm, allocating out" against "kernels.gemm (cached out)";
#  3. the skinny sweep, f32 col: per shape of 1e9-1e11 FLOP with M or N <= 256, worst first by session 21's grid
#     (`python -m tuner.skinny_sweep --acc f32 --min-flop 1e9 --max-flop 1e11 --rank <s21 col grid>`), the cluster
#     variants that multicast the short side's operand, beside the tables' choice, torch.matmul and cuBLAS TN, one
#     interleaved run; tuner.confirm says how many entries it would correct.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s22
python3 -m kernels.build --tables committed --set skinny --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT SET=skinny KERNEL_S=${KERNEL_S:-150} DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
echo "suites done at $(el)s" >> $OUT/rc.txt
timeout 60 python3 -m kernels.overhead --shape 64x4096x64 --b-layout col --acc f32 --set tables --rotate 64 \
  --calls 1500 > $OUT/overhead.txt 2>&1
echo "overhead rc=$? at $(el)s" >> $OUT/rc.txt
left=$(( ${END:-570} - $(el) - 25 ))
OUT=$OUT/sweep_col LIST_fp32=$S/skinny_col_f32.txt LIST_fp16=$S/skinny_col_f16.txt B_LAYOUT=col \
  ACCS="${ACCS:-fp32}" DEADLINE=$left SKIP_ENV=1 bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "skinny sweep done at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "allocating|cached|torch.matmul" $OUT/overhead.txt
pack_out call1
