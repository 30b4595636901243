#!/usr/bin/env bash
# Session 48's call for whichever card comes (a call naming nvidia-h200 mostly gets an H100).
# - H200: session 47's plan, call 1 (benchmarks/h100-2026-12-06-s45/first_call.sh: late round 3's A/B, the suites,
#   the f16 row grid until END).
# - H100: the split-K families tuned on this card for the first time, over the 204 few-tile long-K shapes
#   (tuner/grids/long_k_few_tiles.txt), col layout, f16 then f32; each shape's best split-K arm timed beside the
#   tables as this card runs them (its overlay on) in one interleaved run (session 44's call 5 on the H200, through
#   benchmarks/h200-2026-12-05-s34/skinny_splitk.sh). Four of the nine f16 col shapes below 0.97x of torch.matmul in
#   every run of session 47 run cuBLAS TN on long K with few output tiles, where splitting K fills the card; the
#   H100's overlays came from grid runs of the H200's choices and never searched the split-K arms.
#   HGEMM_COMMIT=<sha> [GRID=tuner/grids/skinny_long.txt] [RUNS="fp32:row fp16:row"] \
#     bash benchmarks/h100-2026-12-06-s48/first_call.sh       # carry .whl .carry7 .carry3 .carry8
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  END=${END:-540} exec bash benchmarks/h100-2026-12-06-s45/first_call.sh
fi
GRID=${GRID:-tuner/grids/long_k_few_tiles.txt} RUNS=${RUNS:-"fp16:col fp32:col"} DL=${DL:-130} EVAL_DL=${EVAL_DL:-85} \
  CALL=${CALL:-call2} exec bash benchmarks/h200-2026-12-05-s34/skinny_splitk.sh
