# Sourced first by a device call's script (benchmarks/<session>/sNcM.sh) on the GPU host: the carried wheels
# (scripts/device_env.sh), every carried kernel pack (.carry*/kernel_cache*.tar.gz) unpacked into the cache and
# removed (the tree is copied back as it is), the GPU's identity in $OUT/env.txt, and `el` (seconds since start)
# for the script's progress lines in $OUT/rc.txt.
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
mkdir -p .cache/hgemm
for pack in .carry*/kernel_cache*.tar.gz; do [ -f "$pack" ] && tar xzf "$pack" -C .cache/hgemm && rm "$pack"; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/env.txt
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" >> $OUT/env.txt 2>&1
echo "commit $HGEMM_COMMIT" >> $OUT/env.txt
