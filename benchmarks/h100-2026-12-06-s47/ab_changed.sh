#!/usr/bin/env bash
# Session 47's call 5 (an H100; carry .whl .carry7): the 7 entries this session's grids changed in the H100 overlays
# (1 f32 row, 6 f16 col: call5/shapes/), the overlays after (the tree's) against those before, both roles
# (scripts/h200_ab.sh). OLD: a folder in the tree holding kernels/tables as of ce9ffd9, made here with
#   mkdir -p s47ab && git archive ce9ffd9 kernels/tables | tar x -C s47ab && mv s47ab/kernels/tables s47ab/old_tables
#   OLD=s47ab/old_tables HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s47/ab_changed.sh     # ~80 s
set -u
source scripts/device_prologue.sh
S=benchmarks/h100-2026-12-06-s47
GPU=$(python3 -c "import torch; print(torch.cuda.get_device_name())")
python3 -m tuner.gpu_overlays --merged /tmp/cand --gpu "$GPU" >> $OUT/rc.txt 2>&1
python3 -m tuner.gpu_overlays --merged /tmp/base --gpu "$GPU" --tables "${OLD:?}" >> $OUT/rc.txt 2>&1
export SHAPES_fp32=$S/call5/shapes/row_fp32.txt SHAPES_fp16=$S/call5/shapes/col_fp16.txt
for spec in "row fp32" "col fp16"; do
  set -- $spec
  OUT=$OUT/ab_$1 CAND=/tmp/cand BASE=/tmp/base ACCS=$2 B_LAYOUT=$1 DEADLINE=${AB_DL:-30} BENCH_S=0.3 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_$1.txt 2>&1
  echo "ab $1 $2 rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call5}
