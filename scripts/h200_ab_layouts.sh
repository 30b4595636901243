# The A/B of a candidate table against the committed one in both B layouts, both roles, in one device call. Sourced by
# a session script after scripts/device_prologue.sh (it uses $OUT and `el`):
#   CAND=dir/with/sm90_<acc>.json SHAPES=path/prefix [AB_DL=100] [LAYOUTS="col row"]; source scripts/h200_ab_layouts.sh
# Shapes per accumulator and layout: ${SHAPES}_f32_col.txt, ${SHAPES}_f16_row.txt, ... (the changed entries).
# Writes $OUT/ab_<layout>/ (scripts/h200_ab.sh: summary.txt, ab.tar.gz) and one progress line per layout to rc.txt.
python3 -m kernels.build --tables committed,$CAND --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
for layout in ${LAYOUTS:-col row}; do
  OUT=$OUT/ab_$layout CAND=$CAND SHAPES_fp32=${SHAPES}_f32_$layout.txt SHAPES_fp16=${SHAPES}_f16_$layout.txt \
    B_LAYOUT=$layout DEADLINE=${AB_DL:-100} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
