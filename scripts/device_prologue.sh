# Sourced first by a device call's script (benchmarks/<session>/sNcM.sh) on the GPU host: the carried wheels
# (scripts/device_env.sh), every carried kernel pack (.carry*/kernel_cache*.tar.gz or .tar.xz) unpacked into the
# cache and removed (the tree is copied back as it is), the GPU's identity in $OUT/env.txt, the fast path's tensor
# reader built, and `el` (seconds since start) for the script's progress lines in $OUT/rc.txt.
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
mkdir -p .cache/hgemm
# .tar.xz packs (kernels.build.pack by the name: ~15x smaller) through Python's lzma, the host may lack xz(1); tar(1)
# if this Python lacks lzma
for pack in .carry*/kernel_cache*.tar.gz .carry*/kernel_cache*.tar.xz; do
  [ -f "$pack" ] || continue
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" \
    "$pack" .cache/hgemm 2>> $OUT/rc.txt || tar xf "$pack" -C .cache/hgemm
  rm "$pack"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/env.txt
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" >> $OUT/env.txt 2>&1
echo "commit $HGEMM_COMMIT" >> $OUT/env.txt
# per-call figures move with the host (session 23: torch.matmul's median small call 33 vs 76-81 us on two machines)
echo "host $(hostname), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/env.txt
# the fast path's tensor reader compiles against this torch once (~10 s): here, not inside a timed run's deadline
python3 -c "import kernels.fastpath as f; print('tensor reader:', f.build_reader())" >> $OUT/env.txt 2>&1 \
  || echo "tensor reader: not built (the fast path reads operands through Python)" >> $OUT/env.txt
# At most 8 files come back from $OUT: a script that writes more ends with `pack_out callN`, which leaves env.txt,
# rc.txt and one tarball of everything else (session 17's call 1 lost its A/B role results to that limit).
pack_out() {
  local keep=/tmp/pack_out_keep; rm -rf $keep; mkdir -p $keep
  tar czf $keep/$1.tgz -C $OUT --exclude=./env.txt --exclude=./rc.txt . && find $OUT -mindepth 1 -maxdepth 1 \
    ! -name env.txt ! -name rc.txt -exec rm -rf {} + && mv $keep/$1.tgz $OUT/
}
