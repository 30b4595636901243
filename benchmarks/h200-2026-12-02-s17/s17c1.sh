#!/usr/bin/env bash
# Session 17, call 1 (nvidia-h200):
#  1. tuner.call_anatomy on small col shapes, f32 and f16, and f32 without the graph replays between samples: a
#     per-call sample split into host part and wait, for ours,
#     torch.matmul, cuBLAS TN and two floors with no GEMM (a sync around nothing, one torch fill_) -- what of the
#     per-call time below 1e9 FLOP any kernel can remove (goal 2.5x over torch.matmul there);
#  2. A/B of --mid-floor 0.97 (.carry6/cand_mid: `python -m tuner.committed_tables --out-dir .carry6/cand_mid
#     --mid-floor 0.97`; past the host-bound gate, the least kernel + host time among kernels within 3% of the
#     fastest) against the committed tables on session 16's samples of its changed entries (60 per accumulator and
#     layout), both roles, col then row;
#  3. 1024x512x8192 f32 col, three short runs against torch.matmul and cuBLASLt heuristic TN (session 16's grid: 0.916x
#     kernel-only, graph choice unchanged since session 15's 0.985x).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s16
python3 -m kernels.build --tables committed,.carry6/cand_mid --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
SMALL=64_128_64,512_64_128,64_4096_64,512_512_1024,1024_1024_1024,2048_2048_2048
for spec in "f32 replays" "f16 replays" "f32 no-replays"; do
  set -- $spec; flag=; [ $2 = no-replays ] && flag=--no-replays
  timeout 60 python3 -m tuner.call_anatomy --acc $1 --b-layout col --seconds 1 $flag --shapes $SMALL \
    --out $OUT/anatomy_$1_$2.json > $OUT/anatomy_$1_$2.txt 2>&1
  echo "anatomy $spec rc=$? at $(el)s" >> $OUT/rc.txt
done
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=.carry6/cand_mid SHAPES_fp32=$S/mid97_sample_f32_$layout.txt \
    SHAPES_fp16=$S/mid97_sample_f16_$layout.txt B_LAYOUT=$layout DEADLINE=${AB_DEADLINE:-45} BENCH_S=0.2 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_console_$layout.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
echo 1024_512_8192 > /tmp/odd.txt
for i in 1 2 3; do
  timeout 40 ./eval_one_file.sh --grid /tmp/odd.txt --acc_precise fp32 --warmup_seconds 0.3 --benchmark_seconds 1 \
    --base_dir $OUT/odd_$i --gpu_device_id 0 --mode offline --timing both \
    --baselines torch.matmul,cuBLASLt-heuristic-tn,cuBLAS-tn > $OUT/odd_$i.log 2>&1
  echo "odd $i rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt | grep -v " rc="
tail -n 9 $OUT/anatomy_*.txt
for i in 1 2 3; do tail -6 $OUT/odd_$i.log; done
