# The A/B of a candidate table against the committed one in both B layouts, both roles, in one device call. Sourced by
# a session script after scripts/device_prologue.sh (it uses $OUT and `el`):
#   CAND=dir/with/sm90_<acc>.json SHAPES=path/prefix [AB_DL=100] [LAYOUTS="col row"]; source scripts/h200_ab_layouts.sh
# Shapes per accumulator and layout: ${SHAPES}_f32_col.txt, ${SHAPES}_f16_row.txt, ... (the changed entries); a
# layout A/Bs the accumulators that have a file. BASE: the tables to compare against (default: the committed ones);
# BENCH_S seconds per timing (0.2). OLD (a kernels/tables folder of an older commit, instead of CAND and BASE): this
# card's overlays as the tree has them against OLD's, each merged over its tables (`tuner.gpu_overlays --merged`).
# Writes $OUT/ab_<layout>/ (scripts/h200_ab.sh: summary.txt, ab.tar.gz) and one progress line per layout to rc.txt.
if [ -n "${OLD:-}" ]; then
  gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name())")
  python3 -m tuner.gpu_overlays --merged /tmp/ab_cand --gpu "$gpu" >> $OUT/rc.txt 2>&1
  python3 -m tuner.gpu_overlays --merged /tmp/ab_base --gpu "$gpu" --tables "$OLD" >> $OUT/rc.txt 2>&1
  CAND=/tmp/ab_cand BASE=/tmp/ab_base
fi
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
for layout in ${LAYOUTS:-col row}; do
  accs=$(for acc in fp32 fp16; do [ -f ${SHAPES}_${acc/fp/f}_$layout.txt ] && echo -n "$acc "; done)
  [ -n "$accs" ] || continue
  OUT=$OUT/ab_$layout CAND=$CAND SHAPES_fp32=${SHAPES}_f32_$layout.txt SHAPES_fp16=${SHAPES}_f16_$layout.txt \
    ACCS="$accs" B_LAYOUT=$layout DEADLINE=${AB_DL:-100} BENCH_S=${BENCH_S:-0.2} SKIP_ENV=1 BASE=${BASE:-} \
    bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
