#!/usr/bin/env bash
# Session 51's call 3 (an H100, warm after call 2; carry .whl .carry7 .carry8): the shapes a grid put below 0.97x of
# torch.matmul or of cuBLAS in B's form, timed again in 3 fresh eval runs each (scripts/floor_recheck.sh). Its
# rounds go beside the grid in the card's overlay runs (tuner.gpu_overlays.Rechecked). Call 3 ran it on call 2's f32
# row grid (the results then carried in an untracked folder; now filed):
#   HGEMM_COMMIT=<sha> bash benchmarks/h100-2026-12-06-s51/floor_recheck.sh
#   FIRST=<a grid's results.json.gz in the tree> LAYOUT=col ACC=fp16 CALL=call5 ... (another grid)
set -u
source scripts/device_prologue.sh
LAYOUT=${LAYOUT:-row}; ACC=${ACC:-fp32}
[ $LAYOUT = col ] && base=cuBLAS-tn || base=cuBLAS-nn
OUT=$OUT/${LAYOUT}_$ACC FIRST=${FIRST:-benchmarks/h100-2026-12-06-s51/call2/grid_row/fp32/results.json.gz} \
  B_LAYOUT=$LAYOUT ACC=$ACC BASELINES=torch.matmul,$base ROUNDS=${ROUNDS:-3} DEADLINE=${DEADLINE:-180} \
  bash scripts/floor_recheck.sh
echo "recheck rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/rc.txt; sed -n '/^| baseline | below/,$p' $OUT/${LAYOUT}_$ACC/summary.txt
pack_out ${CALL:-call3}
