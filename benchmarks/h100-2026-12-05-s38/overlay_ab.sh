#!/usr/bin/env bash
# Prepared in session 38 for a later call on an H100 (carry .whl .carry7; keep h100-2026-12-05-s38): the H100 overlays
# (kernels/tables/gpus/nvidia-h100-80gb-hbm3/sm90_<acc>.json) A/B'd against the committed tables without them, both
# roles, on the shapes each changes, one run per B layout (scripts/h200_ab.sh). BASE is given so that neither role's
# `ours` is the dispatcher's default, which on an H100 lays the overlay on itself. ACCS: the overlays' accumulators
# (default "fp32", as prepared; session 40 added the f16 overlay: ACCS="fp32 fp16", 35 / 68 f32 and 54 / 37 f16
# shapes row / col, ~4 x 2 x AB_DL s). ~2 roles x AB_DL s (default 60) per layout and accumulator with shapes.
# LAYOUTS (default "row col"): the B layouts to A/B (session 42: col only, where the f16 overlay grew).
#   HGEMM_COMMIT=<sha> ACCS="fp32 fp16" CALL=call1 bash benchmarks/h100-2026-12-05-s38/overlay_ab.sh
set -u
source scripts/device_prologue.sh
GPU=$(python3 -c "import torch; print(torch.cuda.get_device_name())")
echo "gpu: $GPU" >> $OUT/rc.txt
CAND=/tmp/overlay_cand
python3 -m tuner.gpu_overlays --merged $CAND --gpu "$GPU" >> $OUT/rc.txt 2>&1
python3 - "$GPU" "${ACCS:-fp32}" <<'PY' >> $OUT/rc.txt
import sys
from tuner import gpu_overlays
from tuner.results import read_json
for acc_dir in sys.argv[2].split():
    acc = acc_dir.replace("fp", "f")
    path = gpu_overlays.overlay_path(sys.argv[1], acc)
    entries = read_json(path)["entries"] if path.is_file() else []
    for layout in ("row", "col"):
        shapes = sorted({f"{e['m']}_{e['n']}_{e['k']}" for e in entries if e["b_layout"] == layout})
        open(f"/tmp/overlay_{layout}_{acc_dir}.txt", "w").write("".join(s + "\n" for s in shapes))
        print(f"{acc} {layout}: {len(shapes)} overlay shapes")
PY
for layout in ${LAYOUTS:-row col}; do
  accs=""
  for acc in ${ACCS:-fp32}; do [ -s /tmp/overlay_${layout}_$acc.txt ] && accs="$accs $acc"; done
  [ -n "$accs" ] || continue
  OUT=$OUT/ab_$layout CAND=$CAND BASE=kernels/tables ACCS="$accs" SHAPES_fp32=/tmp/overlay_${layout}_fp32.txt \
    SHAPES_fp16=/tmp/overlay_${layout}_fp16.txt B_LAYOUT=$layout DEADLINE=${AB_DL:-60} BENCH_S=0.2 SKIP_ENV=1 \
    bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout ($accs) rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
