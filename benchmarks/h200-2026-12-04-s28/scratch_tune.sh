#!/usr/bin/env bash
# Session 28: what tuning costs from scratch on one H200 (issue 4's "whole grid, both accumulators, one H200, including
# compilation"), timed in phases that survive being split over device calls:
#   1. compile the variants the committed tables run (kernels.build --tables committed, one nvcc per core) into an
#      empty cache (HGEMM_CACHE_DIR=/tmp/hgemm_scratch: nothing carried, nothing foreign);
#   2. one tuning pass per accumulator over the 1000-shape col grid with those variants (tuner.tune, the settings of
#      scripts/h200_grid.sh), records in /tmp/scratch_state, tables into /tmp/scratch_tables (kernels/tables untouched).
# Every phase is resumable: a second call on the warm machine continues (the cache and the state live in /tmp); on a
# fresh machine the previous call's scratch.tgz.part-* files, carried in .carry4/, restore both. END (seconds after
# the start) bounds the call; each phase's wall time goes to rc.txt, its log to $OUT.
#   HGEMM_COMMIT=<sha> END=540 bash benchmarks/h200-2026-12-04-s28/scratch_tune.sh
# A pass with another search policy: TAG names its state and tables (/tmp/scratch_state$TAG), TUNE_ARGS go to
# tuner.tune (e.g. "--repeat-penalty 0.1"), PREBUILT=1 uses the carried tables pack (.carry1) instead of compiling.
set -u
source scripts/device_prologue.sh
END=${END:-540}
TAG=${TAG:-}
export HGEMM_CACHE_DIR=/tmp/hgemm_scratch
[ "${PREBUILT:-0}" = 1 ] && export HGEMM_CACHE_DIR=$PWD/.cache/hgemm
ST=/tmp/scratch_state$TAG; TB=/tmp/scratch_tables$TAG
if [ ! -d $ST ] && ls .carry4/scratch.tgz.part-* > /dev/null 2>&1; then
  cat .carry4/scratch.tgz.part-* | tar xz -C /tmp && echo "restored the cache and state from .carry4" >> $OUT/rc.txt
fi
mkdir -p $HGEMM_CACHE_DIR $ST $TB
nvcc --version | tail -2 | head -1 >> $OUT/env.txt
echo "start: $(python3 -m kernels.build --tables committed --dry-run | tail -1)" >> $OUT/rc.txt
left() { echo $(( END - $(el) )); }
b0=$(el)
python3 -m kernels.build --tables committed --jobs $(nproc) --deadline $(( $(left) - 30 )) > $OUT/build_$b0.log 2>&1
echo "build rc=$? from ${b0}s to $(el)s: $(tail -1 $OUT/build_$b0.log)" >> $OUT/rc.txt
echo "nvcc seconds of the variants built this call: $(awk '$2=="built"{s+=$3; n++; if($3>m)m=$3} END{printf "%d built, %.0f s total, %.0f mean, %.0f max", n, s, s/(n?n:1), m}' $OUT/build_$b0.log)" >> $OUT/rc.txt
if [ "$(python3 -m kernels.build --tables committed --dry-run | grep -c ' to build ')" = 0 ]; then
  for acc in fp32 fp16; do
    [ $(left) -lt 60 ] && break
    t=$(el)
    python3 -m tuner.tune --env gpu --grid tuner/grids/grid_1000.txt --acc $acc --b-layout col --gpus 0 \
      --variant-set tables --budget-trials 12 --budget-seconds 0.4 --lt-sweep-us 100 \
      --deadline-seconds $(( $(left) - 45 )) --state-dir $ST --tables-dir $TB --min-speedup 1.01 --objective kernel \
      ${TUNE_ARGS:-} >> $OUT/tune_$acc$TAG.log 2>&1
    echo "tune $acc rc=$? from ${t}s to $(el)s: $(python3 - $ST/finished_$([ $acc = fp16 ] && echo f16 || echo f32)_col.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
js = [r["job_seconds"]["total"] for r in rows if isinstance(r.get("job_seconds"), dict)]
print(f"{len(rows)} shapes finished, job seconds {sum(js):.0f}")
PY
)" >> $OUT/rc.txt
  done
fi
# files come back at most 8, 16 MiB each: the cache in 15 MB parts, the logs in one tarball
if [ "${PREBUILT:-0}" = 1 ]; then  # the cache came with the call: only the state and tables go back
  tar czf - -C /tmp scratch_state$TAG scratch_tables$TAG | split -b 15M - $OUT/scratch.tgz.part-
else
  tar czf - -C /tmp hgemm_scratch/lib scratch_state$TAG scratch_tables$TAG 2>/dev/null \
    | split -b 15M - $OUT/scratch.tgz.part-
fi
tar czf $OUT/logs.tgz -C $OUT --exclude='scratch.tgz.part-*' --exclude=env.txt --exclude=rc.txt --exclude=logs.tgz . \
  && find $OUT -maxdepth 1 -name '*.log' -delete
echo "packed $(cat $OUT/scratch.tgz.part-* | wc -c) bytes in $(ls $OUT/scratch.tgz.part-* | wc -l) parts at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
