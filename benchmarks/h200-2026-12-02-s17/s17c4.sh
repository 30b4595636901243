#!/usr/bin/env bash
# Session 17, call 4 (nvidia-h200): does a pdl twin cost a lone call more than its base? Call 1's anatomy: on the shapes
# where ours ran a pdl twin, its wait (launch to sync return) was ~2 us longer than torch.matmul's though its kernel is
# faster. tuner.call_anatomy with two pdl twins and their bases as extra competitors, with and without the replays.
set -u
source scripts/device_prologue.sh
V=sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8,sm90_f32_col_t64x64x128_c1x1_sauto_pp_pers_a8_pdl
V=$V,sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8,sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8_pdl
for mode in no-replays replays; do
  flag=; [ $mode = no-replays ] && flag=--no-replays
  timeout 90 python3 -m tuner.call_anatomy --acc f32 --b-layout col --seconds 1 $flag --variants $V \
    --shapes 512_64_128,64_4096_64,512_512_1024,1024_1024_1024 --out $OUT/pdl_$mode.json > $OUT/pdl_$mode.txt 2>&1
  echo "anatomy $mode rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; tail -n 7 $OUT/pdl_*.txt
