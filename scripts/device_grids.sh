#!/usr/bin/env bash
# Grid runs of the committed tables on the device (one call; first written as session 24's s24grid.sh), shuffled in
# scripts/h200_eval.sh's fixed order so a run cut by its deadline is a fixed sample, one after the other as RUNS lists
# them (layout:acc ...), each resumable from /tmp/s24_<TAG>_<layout> by a later call on the same warm machine (or from
# a committed run: RESUME_FROM, read by h200_eval.sh); the time left (END, seconds from the call's start) is split
# evenly over the runs still to go.
# - BASE_COL / BASE_ROW: the baseline beside torch.matmul (default the layout's cuBLAS form; cuBLASLt-auto-tuning-tn /
#   -nn for the autotuner).
# - SUITES=1: the kernel suite over the tables' variants and every dispatch suite first (scripts/h200_gpu_suites.sh,
#   ~100 s); EVAL_TEST=1: the eval GPU suite alone (tests/tuner/test_gpu_eval.py).
# - RECHECK=1: once a grid has every shape, its shapes below 0.97x are timed again (scripts/floor_recheck.sh, 3
#   rounds; RECHECK_S seconds of END kept for it per run, default 60) into grid_<layout>_<acc>/recheck/, which
#   tuner.file_grid files beside the grid's results. Leave it empty for a call that cannot finish a grid.
#   END=570 TAG=s61 RUNS="row:fp32 col:fp16" [SUITES=1] [RECHECK=1] CALL=call1 bash scripts/device_grids.sh
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
