#!/usr/bin/env bash
# Session 35 (prepared without a device): CUDA-L2's server mode against ours. CUDA-L2 publishes per-call speedups in
# two modes (../shared/anchors/cudal2_published_h100_{offline,server}.csv: 1.171x / 1.365x over torch.matmul,
# geomean of the 1000 shapes, their H100); our benchmark has the same `--mode server --target_qps` (an exponential
# idle gap before every sample: the GPU idles between calls, as in serving) but has only run it on a few shapes
# (session 9). Here, over tuner/grids/grid_sample_120.txt, f32, B row-major (torch.matmul's layout, like for like),
# ours beside torch.matmul and cuBLAS NN, per call (CUDA-L2's sync, call, sync), in one call on one machine:
#   1. offline (calls back to back), DL_OFFLINE seconds (150);
#   2. server mode at TARGET_QPS (100), DL_SERVER seconds (250);
# then rc.txt: per mode, the geomean of ours over torch.matmul by FLOP bucket (per_call_vs_cudal2.py; run it again
# here, where ../shared/anchors is, to set CUDA-L2's published figures on the same shapes beside it: their H100, so
# the shape of the comparison carries over, not the last few %).
#   HGEMM_COMMIT=<sha> CALL=callN bash benchmarks/h200-2026-12-05-s35/server_mode.sh   # carry .whl .carry7; ~7 min
# Ran in session 36 (call 4, f32 row: 205 s). ACC (fp32) and LAYOUT (row; col times cuBLAS TN beside) give the other
# tables: e.g. `ACC=fp16 LAYOUT=col`.
set -u
source scripts/device_prologue.sh
GRID=${GRID:-tuner/grids/grid_sample_120.txt}
ACC=${ACC:-fp32} LAYOUT=${LAYOUT:-row}
BASE=$([ $LAYOUT = col ] && echo cuBLAS-tn || echo cuBLAS-nn)
for mode in offline server; do
  dl_var=DL_${mode^^}; dl=${!dl_var:-$([ $mode = offline ] && echo 150 || echo 250)}
  extra=$([ $mode = server ] && echo "--target_qps ${TARGET_QPS:-100}" || true)
  # at 100 QPS a round of three competitors idles ~30 ms: 1 s gives ~30 samples each, as 0.3 s does back to back
  bench=$([ $mode = server ] && echo ${BENCH_S_SERVER:-1.0} || echo ${BENCH_S:-0.3})
  timeout --signal=INT --kill-after=20 $dl ./eval_one_file.sh --grid $GRID --acc_precise $ACC \
    --warmup_seconds 0.05 --benchmark_seconds $bench --base_dir $OUT/$mode --gpu_device_id 0 \
    --mode $mode $extra --timing call --b_layout $LAYOUT --baselines torch.matmul,$BASE > $OUT/$mode.log 2>&1
  echo "$mode rc=$? at $(el)s" >> $OUT/rc.txt
done
PYTHONPATH=.:${PYTHONPATH:-} python3 benchmarks/h200-2026-12-05-s35/per_call_vs_cudal2.py $OUT >> $OUT/rc.txt 2>&1
for mode in offline server; do
  [ -f $OUT/$mode/results.json ] && python3 -m tuner.summary --results $OUT/$mode/results.json \
    --out $OUT/$mode/summary > /dev/null 2>&1
done
cat $OUT/env.txt $OUT/rc.txt
pack_out ${CALL:-call}
