#!/usr/bin/env bash
# Written in session 33 for the next session with a device, calls 2 and 3: first the six small-K, large-output f32
# col shapes (small_k.txt) whose time drifted for us alone between session 30's and 32's col grids (12288x12288x128
# on an unchanged cuBLASLt graph choice 104.5 -> 116.5 us while torch.matmul stayed at 107.0; sm90 choices +6-8%),
# ours beside torch.matmul and cuBLAS TN, kernel-only — once per call, so two calls give two samples minutes apart;
# then a grid of the committed tables (s24grid.sh: RUNS, default the f16 row grid; TAG resumes a cut run on the same
# warm machine) in the time left. Carry .whl and .carry7 (kernel_cache_all.tar.xz). Returns env.txt, rc.txt, CALL.tgz.
set -u
source scripts/device_prologue.sh
timeout --signal=INT --kill-after=10 40 ./eval_one_file.sh --grid benchmarks/h200-2026-12-05-s33/small_k.txt \
  --acc_precise fp32 --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $OUT/small_k --gpu_device_id 0 \
  --mode offline --timing kernel --baselines torch.matmul,cuBLAS-tn --b_layout col > $OUT/small_k.log 2>&1
echo "small-K shapes rc=$? at $(el)s" >> $OUT/rc.txt
# the CLI prints each shape's table (tuner/results.py format_table): its rows go to rc.txt
grep -E "^== |^(ours|torch.matmul|cuBLAS-tn) " $OUT/small_k.log >> $OUT/rc.txt
RUNS=${RUNS:-row:fp16} END=$(( ${END:-565} - $(el) )) TAG=${TAG:-s33} CALL=${CALL:-call2} \
  bash benchmarks/h200-2026-12-03-s24/s24grid.sh
