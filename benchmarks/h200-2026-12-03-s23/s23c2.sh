#!/usr/bin/env bash
# Session 23, calls 2-3 (nvidia-h200 on the previous call's warm machine; carry .whl + .carry1 + .carry2): the
# canonical grids of the committed tables (ours, torch.matmul and the layout's cuBLAS form only), shuffled, one
# after the other as RUNS lists them (layout:acc ...), each resumed from /tmp/s23_<layout> if an earlier call on
# this machine started it; the time left (END) is split evenly over the runs still to go.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
set -- ${RUNS:-col:fp32 col:fp16}
while [ $# -gt 0 ]; do
  layout=${1%%:*}; acc=${1##*:}
  [ $layout = col ] && base=cuBLAS-tn || base=cuBLAS-nn
  DL=$(( (${END:-570} - $(el) - 25) / $# ))
  OUT=$OUT/grid_${layout}_$acc GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
    ACCS=$acc B_LAYOUT=$layout BASELINES=torch.matmul,$base STATE=/tmp/s23_$layout SKIP_ENV=1 \
    bash scripts/h200_eval.sh > /tmp/eval_${layout}_${acc}_console.txt 2>&1
  echo "grid $layout $acc (deadline $DL s) rc=$? at $(el)s" >> $OUT/rc.txt
  shift
done
cat $OUT/env.txt $OUT/rc.txt
grep -hE "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_*/summary.txt | head -40
pack_out ${CALL:-call2}
