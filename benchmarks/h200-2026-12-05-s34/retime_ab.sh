#!/usr/bin/env bash
# Session 34 (prepared without a device): does re-timing a search's leaders beside cuBLAS (tuner.tune --retime-top 3,
# tuner/retime.py) make a pass from scratch pick better above ~20 µs? A paired A/B on the H200:
#   1. the GPU test of GpuEnv.retime (tests/tuner/test_retime.py, -m gpu);
#   2. per accumulator, session 29's pass from scratch (r01: repeat charge 0.3, 12 trials, 0.4 s, lt sweep 100 µs) is
#      resumed with the 160 shapes of retime_shapes.txt taken out of its records (a random 160 of the 455 whose cuBLAS
#      took >= 20 µs in r01), and those shapes are tuned again with --retime-top 3: the shared model starts from the
#      other 840 shapes' trials, as it would have in r01;
#   3. two tables from the same records (tuner.retable, objective kernel, min speedup 1.01): the re-timed figures,
#      and --search-figures (the same trials judged by the search's own figures); they differ only where the
#      re-timing changed a choice (changed_<acc>.txt);
#   4. those shapes timed kernel-only, every competitor checked first: the committed tables (ours), both tables,
#      torch.matmul, cuBLAS TN (geomeans in rc.txt; per shape in results.json).
# What the re-timing cost is in the records (retime.seconds) and in rc.txt. Carry .whl and .carry7 (the committed
# tables' variants are in kernel_cache_all.tar.xz).
#   HGEMM_COMMIT=<sha> CALL=call4 bash benchmarks/h200-2026-12-05-s34/retime_ab.sh
set -u
source scripts/device_prologue.sh
S29=benchmarks/h200-2026-12-04-s29; S34=benchmarks/h200-2026-12-05-s34
SHAPES=${SHAPES:-$S34/retime_shapes.txt}; END=${END:-560}; TOP=${TOP:-3}
left() { echo $(( END - $(el) )); }
timeout 120 python3 -m pytest -q -m gpu tests/tuner/test_retime.py > $OUT/gpu_test.log 2>&1
echo "gpu test rc=$? at $(el)s: $(tail -1 $OUT/gpu_test.log)" >> $OUT/rc.txt
for acc in ${ACCS:-fp32 fp16}; do
  a=$([ $acc = fp16 ] && echo f16 || echo f32)
  [ $(left) -lt 120 ] && { echo "$acc: skipped, $(left)s left" >> $OUT/rc.txt; break; }
  ST=/tmp/retime_state_$a; RT=/tmp/retime_tables
  if [ ! -f $ST/finished_${a}_col.jsonl ]; then  # on a warm machine a second call resumes what the first left
    mkdir -p $ST
    python3 - $S29/r01/state/finished_${a}_col.jsonl.gz $SHAPES > $ST/finished_${a}_col.jsonl <<'PY'
import gzip, sys
drop = set(open(sys.argv[2]).read().split())
for line in gzip.open(sys.argv[1], "rt"):
    if line.split('"mnk": "', 1)[1].split('"', 1)[0] not in drop:
        sys.stdout.write(line)
PY
  fi
  t=$(el)
  python3 -m tuner.tune --env gpu --grid $SHAPES --acc $acc --b-layout col --gpus 0 --variant-set tables \
    --budget-trials 12 --budget-seconds 0.4 --lt-sweep-us 100 --repeat-penalty 0.3 --min-speedup 1.01 \
    --objective kernel --retime-top $TOP --deadline-seconds $(( $(left) - 100 )) --state-dir $ST \
    --tables-dir $RT/tuned >> $OUT/tune_$a.log 2>&1
  echo "tune $acc rc=$? from ${t}s to $(el)s" >> $OUT/rc.txt
  python3 - $ST/finished_${a}_col.jsonl $SHAPES >> $OUT/rc.txt <<'PY'
import copy, json, sys
from tuner.retime import undo
want = set(open(sys.argv[2]).read().split())
new = [r for r in map(json.loads, open(sys.argv[1])) if r["mnk"] in want and "retime" in r]
moved = sum((r["best"] or {}).get("arm") != (undo(copy.deepcopy(r))["best"] or {}).get("arm") for r in new)
print(f"  {len(new)} of {len(want)} shapes re-timed; job seconds {sum(r['job_seconds']['total'] for r in new):.0f}, "
      f"of which re-timing {sum(r['retime']['seconds'] for r in new):.0f}; fastest arm moved on {moved}")
PY
  for kind in retimed search; do
    flag=$([ $kind = search ] && echo --search-figures || true)
    python3 -m tuner.retable --state $ST --acc $a --b-layout col --objective kernel --min-speedup 1.01 $flag \
      --meta-from $RT/tuned/sm90_$a.json --out $RT/$kind/sm90_$a.json >> $OUT/retable.log 2>&1
    echo "retable $a $kind rc=$?" >> $OUT/rc.txt
  done
  python3 - $RT $a $SHAPES $OUT/changed_$a.txt >> $OUT/rc.txt <<'PY'
import sys
from tuner.table_diff import changes, load
rt, acc, shapes, out = sys.argv[1:]
want = set(open(shapes).read().split())
diff = changes(load(f"{rt}/search", acc), load(f"{rt}/retimed", acc))
keys = [f"{m}_{n}_{k}" for m, n, k, _ in diff if f"{m}_{n}_{k}" in want]
open(out, "w").write("".join(k + "\n" for k in keys))
print(f"  {acc}: {len(keys)} of the shapes have another choice with the re-timed figures")
PY
  if [ -s $OUT/changed_$a.txt ] && [ $(left) -gt 60 ]; then
    dl=$(( $(left) - 30 )); [ $dl -gt 200 ] && dl=200
    timeout --signal=INT --kill-after=20 $dl ./eval_one_file.sh --grid $OUT/changed_$a.txt --acc_precise $acc \
      --warmup_seconds 0.05 --benchmark_seconds 0.4 --base_dir $OUT/eval_$a --gpu_device_id 0 --mode offline \
      --timing kernel --b_layout col --baselines torch.matmul,cuBLAS-tn \
      --also_tables retimed=$RT/retimed,search=$RT/search > $OUT/eval_$a.log 2>&1
    echo "$acc eval rc=$? at $(el)s" >> $OUT/rc.txt
    python3 scripts/geomean_over_torch.py $OUT/eval_$a/results.json >> $OUT/rc.txt 2>&1
  fi
done
tar czf $OUT/retime_state.tgz -C /tmp retime_state_f32 retime_state_f16 retime_tables 2>/dev/null
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call}
