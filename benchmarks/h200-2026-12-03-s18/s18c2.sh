#!/usr/bin/env bash
# Session 18, call 2 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack)): the twin sweep
# (scripts/h200_twin_sweep.sh): per row shape of 1e9-1e11 FLOP whose entry runs cuBLAS / cuBLASLt, the row twins of
# the col entry's choices timed beside the committed tables' choice, torch.matmul and cuBLAS NN, one interleaved run
# per accumulator; tuner.confirm on a copy says how many entries it would correct.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --set tables,tables_row --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
D=benchmarks/h200-2026-12-02-s17
OUT=$OUT/sweep LIST_fp32=$D/twin_sweep_lib_f32.txt LIST_fp16=$D/twin_sweep_lib_f16.txt DEADLINE=${DEADLINE:-200} \
  SKIP_ENV=1 bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "sweep done at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
pack_out call2
