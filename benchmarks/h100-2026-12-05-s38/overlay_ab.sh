#!/usr/bin/env bash
# Prepared in session 38 for a later call on an H100 (carry .whl .carry7; keep h100-2026-12-05-s38): the H100 overlay
# (kernels/tables/gpus/nvidia-h100-80gb-hbm3/sm90_f32.json, from this session's grids) A/B'd against the committed
# tables without it, both roles, on the shapes it changes, f32, one run per B layout (scripts/h200_ab.sh). BASE is
# given so that neither role's `ours` is the dispatcher's default, which on an H100 now lays the overlay on itself.
# ~2 x 2 x AB_DL s (default 60: 40 row / 48 col shapes).
set -u
source scripts/device_prologue.sh
GPU=$(python3 -c "import torch; print(torch.cuda.get_device_name())")
echo "gpu: $GPU" >> $OUT/rc.txt
CAND=/tmp/overlay_cand
python3 -m tuner.gpu_overlays --merged $CAND --gpu "$GPU" >> $OUT/rc.txt 2>&1
python3 - "$GPU" <<'PY' >> $OUT/rc.txt
import sys
from tuner import gpu_overlays
from tuner.results import read_json
path = gpu_overlays.overlay_path(sys.argv[1], "f32")
entries = read_json(path)["entries"] if path.is_file() else []
for layout in ("row", "col"):
    shapes = sorted({f"{e['m']}_{e['n']}_{e['k']}" for e in entries if e["b_layout"] == layout})
    open(f"/tmp/overlay_{layout}.txt", "w").write("".join(s + "\n" for s in shapes))
    print(f"{layout}: {len(shapes)} overlay shapes")
PY
for layout in row col; do
  [ -s /tmp/overlay_$layout.txt ] || continue
  OUT=$OUT/ab_$layout CAND=$CAND BASE=kernels/tables ACCS=fp32 SHAPES_fp32=/tmp/overlay_$layout.txt B_LAYOUT=$layout \
    DEADLINE=${AB_DL:-60} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -hv " rc=" $OUT/ab_*/summary.txt
pack_out ${CALL:-call1}
