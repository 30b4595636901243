#!/usr/bin/env bash
# Session 34 (prepared without a device): the split-K families on the skinny, long, memory-bound shapes they were
# never tuned on (tuner/grids/skinny_long.txt: min(M, N) <= 256, M*N > 524288, K >= 2048; 90 grid shapes, worst
# first). There the tables' choices move 2.0-4.2 TB/s of operand traffic (median 3.2; session 32's f32 grids) and the
# col grid's 55 shapes below 1.0x of torch.matmul sit (128x8192x4096: 64 output tiles of 128x128 for 132 SMs).
# Splitting K fills the GPU without reading B twice. Per run (default f32 col):
#   0. the GPU kernel suite of splitk_coop (splitk's L2 reduction on CUTLASS's warp-specialized cooperative mainloop,
#      written in session 34 and never run): if it passes, those variants join the search;
#   1. tuner.tune over the splitk, splitk_cluster and splitk_deep sets (no cuBLASLt arms: the tables hold those),
#      every arm checked against fp64 then timed against cuBLAS on the same operands; records in skinny_<layout>/
#      for tuner/committed_tables.py (RECORDS / ROW_RECORDS, as session 13's and 14's split-K runs were merged);
#   2. each tuned shape's best split-K arm, with its splits (eval_one_file.sh --also_variants_per_shape, NAME@sS),
#      timed kernel-only beside the committed tables (ours), torch.matmul and cuBLAS TN in one interleaved run, every
#      competitor checked first; geomeans and the shapes below 0.97x with and without it in rc.txt. Those
#      `ours:NAME@sS` results are what tuner.confirm turns into table corrections (then an A/B in both roles).
#   HGEMM_COMMIT=<sha> CALL=call2 bash benchmarks/h200-2026-12-05-s34/skinny_splitk.sh   # carry .whl .carry7 .carry8
# .carry8 = kernel_cache_splitk_all.tar.xz (python -m kernels.build --set splitk,splitk_cluster,splitk_deep,splitk_coop
# --pack .carry8/kernel_cache_splitk_all.tar.xz). RUNS (default "fp32:col"; "fp32:row", "fp16:col" ... after), DL
# seconds of tuning per run (240), EVAL_DL seconds of eval per run (120); GRID another shape list (e.g.
# tuner/grids/long_k_few_tiles.txt: the few-tile long-K shapes where splitk_coop is meant to catch cuBLAS up).
set -u
source scripts/device_prologue.sh
W=/tmp/skinny; mkdir -p $W/logs
GRID=${GRID:-tuner/grids/skinny_long.txt}
SETS=splitk,splitk_cluster,splitk_deep
echo "start: $(python3 -m kernels.build --set $SETS,splitk_coop --dry-run | tail -1)" >> $OUT/rc.txt
echo "tables: $(python3 -m kernels.build --tables committed --dry-run | tail -1) (ours in the eval)" >> $OUT/rc.txt
# splitk_coop (new in session 34, never run on a GPU): its kernel suite first; it joins the search only if it passes
HGEMM_TEST_SET=splitk_coop timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -x \
  tests/kernels/test_gpu_kernels.py > $W/logs/gpu_kernels_splitk_coop.txt 2>&1
rc=$?
echo "kernel suite (splitk_coop) rc=$rc at $(el)s: $(tail -1 $W/logs/gpu_kernels_splitk_coop.txt)" >> $OUT/rc.txt
[ $rc = 0 ] && SETS=$SETS,splitk_coop
for run in ${RUNS:-fp32:col}; do
  acc=${run%%:*}; layout=${run##*:}; a=${acc/fp/f}
  t=$(el)
  timeout $(( ${DL:-240} + 40 )) python3 -m tuner.tune --env gpu --grid $GRID --acc $acc \
    --b-layout $layout --gpus 0 --variant-set $SETS --lt-arms 0 --lt-sweep-us 0 \
    --budget-trials 30 --budget-seconds 3 --deadline-seconds ${DL:-240} --state-dir $W/skinny_$layout \
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
  python3 - $W/skinny_$layout/finished_${a}_$layout.jsonl $W/best_${a}_$layout.txt <<'PY'
import json, os, sys
from tuner.competitors import knob_suffix
records = [json.loads(line) for line in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
with open(sys.argv[2], "w") as out:
    for r in records:
        if r.get("best"):
            arm = r["best"]["arm"]
            splits = arm["splits"] if arm["splits"] > 1 else 0
            out.write(f"{r['mnk']} {arm['config']}{knob_suffix({'splits': splits})}\n")
PY
  if [ -s $W/best_${a}_$layout.txt ]; then
    cut -d' ' -f1 $W/best_${a}_$layout.txt > $W/shapes_${a}_$layout.txt
    timeout --signal=INT --kill-after=20 ${EVAL_DL:-120} ./eval_one_file.sh --grid $W/shapes_${a}_$layout.txt \
      --acc_precise $acc --warmup_seconds 0.05 --benchmark_seconds 0.3 --base_dir $W/eval_${a}_$layout \
      --gpu_device_id 0 --mode offline --timing kernel --b_layout $layout \
      --baselines torch.matmul,cuBLAS-$([ $layout = col ] && echo tn || echo nn) \
      --also_variants_per_shape $W/best_${a}_$layout.txt > $W/logs/eval_${a}_$layout.log 2>&1
    echo "eval $acc $layout rc=$? at $(el)s" >> $OUT/rc.txt
    python3 - $W/eval_${a}_$layout/results.json >> $OUT/rc.txt <<'PY'
import json, math, sys
shapes = json.load(open(sys.argv[1]))["shapes"]
def us(c): return c["kernel_us"] if c.get("ok") and c.get("kernel_us") else None
rows = []
for s in shapes:
    c = s["competitors"]
    split = next((v for k, v in c.items() if k.startswith("ours:")), {})
    torch, ours, sk = us(c.get("torch.matmul", {})), us(c.get("ours", {})), us(split)
    if torch and ours:
        # the table as confirm would leave it: the split-K arm where it ran >= 3% faster than the table's choice
        taken = sk if sk and sk <= 0.97 * ours else ours
        rows.append((s["mnk"], torch / ours, torch / sk if sk else None, torch / taken))
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
both = [r for r in rows if r[2]]
print(f"  {len(rows)} shapes: ours {gm([r[1] for r in rows]):.4f}x over torch.matmul, with the split-K arm where "
      f">= 3% faster {gm([r[3] for r in rows]):.4f}x; below 0.97x {sum(r[1] < 0.97 for r in rows)} -> "
      f"{sum(r[3] < 0.97 for r in rows)}; split-K arm alone {gm([r[2] for r in both]):.4f}x on {len(both)}")
for mnk, o, k, t in sorted(rows, key=lambda r: r[1])[:10]:
    print(f"    {mnk} ours {o:.3f} split-K {k if k is None else round(k, 3)}")
PY
  fi
done
tar czf $OUT/skinny_records.tar.gz -C $W .
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call}
