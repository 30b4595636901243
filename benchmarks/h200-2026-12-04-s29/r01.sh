#!/usr/bin/env bash
# Session 29: one tuning pass from scratch with the repeat charge (tuner.tune --repeat-penalty 0.3: a variant this
# shape has measured costs 0.3 log-speedup on its other raster / swizzle settings), the same settings as session 28's
# pass otherwise (h200-2026-12-04-s28/scratch_tune.sh with the carried tables pack, PREBUILT=1). When both accumulators
# have finished and EVAL_LEFT seconds remain before END, the same call retables the f16 with borrowed f32 choices
# (as session 28's scratch/tables_borrow) and measures the pass beside session 28's (s28c5.sh, ~80 s per accumulator: 120 shapes,
# kernel-only, torch.matmul, cuBLAS TN, the committed tables). Otherwise run it again on the warm machine: the pass
# resumes from /tmp/scratch_state_r01.
#   HGEMM_COMMIT=<sha> END=560 bash benchmarks/h200-2026-12-04-s29/r01.sh     (carry .whl and .carry1)
set -u
S28=benchmarks/h200-2026-12-04-s28
T0=$(date +%s); END=${END:-560}; EVAL_LEFT=${EVAL_LEFT:-220}
[ -f /tmp/r01_done ] || TAG=_r01 PREBUILT=1 TUNE_ARGS="--repeat-penalty 0.3" END=$END bash $S28/scratch_tune.sh
ST=/tmp/scratch_state_r01; TB=/tmp/scratch_tables_r01; TBB=/tmp/scratch_tables_r01_borrow
n() { [ -f $1 ] && wc -l < $1 || echo 0; }
done_f32=$(n $ST/finished_f32_col.jsonl); done_f16=$(n $ST/finished_f16_col.jsonl)
left=$(( END - ($(date +%s) - T0) ))
echo "r01: f32 $done_f32 / f16 $done_f16 shapes finished, ${left}s left" >> $OUT/rc.txt
if [ "$done_f32" -ge 1000 ] && [ "$done_f16" -ge 1000 ] && [ $left -ge $EVAL_LEFT ]; then
  touch /tmp/r01_done
  mkdir -p $TBB && cp $TB/sm90_f32.json $TBB/
  python3 -m tuner.retable --state $ST --acc f16 --b-layout col --objective kernel --borrow-f32 \
    --meta-from $TB/sm90_f16.json --out $TBB/sm90_f16.json >> $OUT/rc.txt 2>&1
  echo "retable rc=$?" >> $OUT/rc.txt
  tar czf $OUT/r01_borrow.tgz -C /tmp scratch_tables_r01_borrow
  dl=$(( (left - 40) / 2 )); [ $dl -gt 150 ] && dl=150
  DL=$dl ALSO=scratch=$S28/scratch/tables_borrow,r01=$TBB bash $S28/s28c5.sh
fi
cat $OUT/rc.txt | tail -5
