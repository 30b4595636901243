#!/usr/bin/env bash
# Session 34 (prepared without a device): the split-K families on the skinny, long, memory-bound shapes they were
# never tuned on (tuner/grids/skinny_long.txt: min(M, N) <= 256, M*N > 524288, K >= 2048; 90 grid shapes, worst
# first). There the tables' choices move 2.0-4.2 TB/s of operand traffic (median 3.2; session 32's f32 grids) and the
# col grid's 55 shapes below 1.0x of torch.matmul sit (128x8192x4096: 64 output tiles of 128x128 for 132 SMs).
# Splitting K fills the GPU without reading B twice. Per layout, f32 first: tuner.tune over the splitk, splitk_cluster
# and splitk_deep sets (no cuBLASLt arms: the tables already hold those), every arm checked against fp64 then timed
# against cuBLAS on the same operands; records in skinny_<layout>/ for tuner/committed_tables.py (RECORDS /
# ROW_RECORDS, as session 13's and 14's split-K runs were merged), and in rc.txt the shapes where the best split-K arm
# beats the committed table's graph choice by >= 3% in speedup over cuBLAS (each from its own run: a candidate list
# for the A/B, not a result).
#   HGEMM_COMMIT=<sha> CALL=call5 bash benchmarks/h200-2026-12-05-s34/skinny_splitk.sh   # carry .whl .carry8
# .carry8 = kernel_cache_splitk_all.tar.xz (python -m kernels.build --set splitk,splitk_cluster,splitk_deep
# --pack .carry8/kernel_cache_splitk_all.tar.xz). RUNS (default "fp32:col fp32:row"), DL seconds per run (200).
set -u
source scripts/device_prologue.sh
W=/tmp/skinny; mkdir -p $W/logs
echo "start: $(python3 -m kernels.build --set splitk,splitk_cluster,splitk_deep --dry-run | tail -1)" >> $OUT/rc.txt
for run in ${RUNS:-fp32:col fp32:row}; do
  acc=${run%%:*}; layout=${run##*:}; a=${acc/fp/f}
  t=$(el)
  timeout $(( ${DL:-200} + 40 )) python3 -m tuner.tune --env gpu --grid tuner/grids/skinny_long.txt --acc $acc \
    --b-layout $layout --gpus 0 --variant-set splitk,splitk_cluster,splitk_deep --lt-arms 0 --lt-sweep-us 0 \
    --budget-trials 30 --budget-seconds 3 --deadline-seconds ${DL:-200} --state-dir $W/skinny_$layout \
    --tables-dir $W/tables_$layout --min-speedup 1.0 --objective kernel > $W/logs/tune_${a}_$layout.log 2>&1
  echo "tune $acc $layout rc=$? from ${t}s to $(el)s" >> $OUT/rc.txt
  python3 - $W/skinny_$layout/finished_${a}_$layout.jsonl $a $layout >> $OUT/rc.txt <<'PY'
import json, math, sys
from tuner.results import read_json
path, acc, layout = sys.argv[1:]
records = [json.loads(line) for line in open(path)] if __import__("os").path.exists(path) else []
table = {(e["m"], e["n"], e["k"]): e for e in read_json(f"kernels/tables/sm90_{acc}.json")["entries"]
         if e["b_layout"] == layout}
wins, logs = [], []
for r in records:
    m, n, k = map(int, r["mnk"].split("_"))
    entry = table.get((m, n, k))
    if not r.get("best") or entry is None:
        continue
    table_speedup = entry["cublas_us"] / entry.get("graph", entry).get("us", entry["us"])  # its tuning-time figure
    ratio = r["best"]["speedup"] / table_speedup
    logs.append(math.log(ratio))
    if ratio >= 1.03:
        wins.append((ratio, r["mnk"], r["best"]["arm"]["config"], r["best"]["arm"]["splits"]))
print(f"  {acc} {layout}: {len(records)} shapes tuned; best split-K over the table's graph choice (speedups over "
      f"cuBLAS, each its own run): geomean {math.exp(sum(logs) / max(len(logs), 1)):.3f}, >= 3% on {len(wins)}")
for ratio, mnk, name, splits in sorted(wins, reverse=True)[:12]:
    print(f"    {mnk} {ratio:.3f} {name} splits {splits}")
PY
done
tar czf $OUT/skinny_records.tar.gz -C $W .
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call}
