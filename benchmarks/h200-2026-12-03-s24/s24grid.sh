#!/usr/bin/env bash
# Session 24, every call (nvidia-h200; carry .whl + .carry1 (tables pack, 124 variants) + .carry2 (tables_row pack)):
# grids of the committed tables, shuffled (the fixed order of scripts/h200_eval.sh, so a run cut by its deadline is
# the same sample as session 23's), one after the other as RUNS lists them (layout:acc ...), each resumable from
# /tmp/s24_<TAG>_<layout> by a later call on the same warm machine; the time left (END) is split evenly over the runs
# still to go. BASE_COL / BASE_ROW: the baselines beside torch.matmul (default the layout's cuBLAS form);
# EVAL_TEST=1 runs the eval GPU suite first (tests/tuner/test_gpu_eval.py: host_probe, per-record host); SUITES=1 (since
# session 37) the kernel suite over the tables' variants and every dispatch suite, eval's included
# (scripts/h200_gpu_suites.sh, ~100 s), instead. RECHECK=1 (since session 51): once a grid has every shape, its
# shapes below 0.97x are timed again (scripts/floor_recheck.sh, 3 rounds; RECHECK_S seconds of END kept for it per
# run, default 60) into grid_<layout>_<acc>/recheck/, which tuner.file_grid files beside the grid's results.
set -u
source scripts/device_prologue.sh
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
if [ -n "${SUITES:-}" ]; then
  OUT=$OUT SET=tables KERNEL_S=70 DISPATCH_S=100 bash scripts/h200_gpu_suites.sh >> $OUT/rc.txt
  echo "suites done at $(el)s" >> $OUT/rc.txt
elif [ -n "${EVAL_TEST:-}" ]; then
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/tuner/test_gpu_eval.py > $OUT/gpu_eval.txt 2>&1
  echo "eval suite rc=$?: $(tail -1 $OUT/gpu_eval.txt) at $(el)s" >> $OUT/rc.txt
fi
set -- ${RUNS:-col:fp32}
while [ $# -gt 0 ]; do
  layout=${1%%:*}; acc=${1##*:}
  [ $layout = col ] && base=${BASE_COL:-cuBLAS-tn} || base=${BASE_ROW:-cuBLAS-nn}
  keep=$(( ${RECHECK:+${RECHECK_S:-60}}+0 ))
  DL=$(( (${END:-570} - $(el) - 25) / $# - keep ))
  OUT=$OUT/grid_${layout}_$acc GRID=tuner/grids/grid_1000.txt SHUFFLE=1 DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
    ACCS=$acc B_LAYOUT=$layout BASELINES=torch.matmul,$base STATE=/tmp/s24_${TAG:-grid}_$layout SKIP_ENV=1 \
    bash scripts/h200_eval.sh > /tmp/eval_${layout}_${acc}_console.txt 2>&1
  echo "grid $layout $acc vs $base (deadline $DL s) rc=$? at $(el)s" >> $OUT/rc.txt
  first=/tmp/s24_${TAG:-grid}_$layout/eval_$acc/results.json
  timed=$([ -f $first ] && python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['shapes']))" $first)
  if [ -n "${RECHECK:-}" ] && [ "$timed" = "$(grep -c . tuner/grids/grid_1000.txt)" ]; then
    OUT=$OUT/grid_${layout}_$acc/recheck FIRST=$first B_LAYOUT=$layout ACC=$acc BASELINES=torch.matmul,$base ROUNDS=3 \
      DEADLINE=$keep bash scripts/floor_recheck.sh > /tmp/recheck_${layout}_${acc}_console.txt 2>&1
    echo "recheck $layout $acc rc=$? at $(el)s: $(head -1 $OUT/grid_${layout}_$acc/recheck/summary.txt)" >> $OUT/rc.txt
  fi
  shift
done
for f in /tmp/s24_${TAG:-grid}_*/eval_*/results.json; do
  python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['meta']; print(sys.argv[1], m.get('host'), m.get('host_cpu'), m.get('host_probe_us'))" $f >> $OUT/rc.txt 2>&1
done
cat $OUT/env.txt $OUT/rc.txt
grep -hE "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_*/summary.txt | head -40
pack_out ${CALL:-call1}
