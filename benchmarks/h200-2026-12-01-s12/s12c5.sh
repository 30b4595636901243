#!/usr/bin/env bash
# Session 12, call 5 (nvidia-h200): host time per cached call with the packed objects stripped (as packs carry them
# since this session) and whole (HGEMM_PACK_STRIP=0), alternating, each run a fresh process with torch.matmul alongside.
# .carry3/{stripped,unstripped}.tar.gz: the 83 variants of `--set tables` both ways.
set -u
source scripts/device_prologue.sh
for round in 1 2 3; do
  for kind in stripped unstripped; do
    tar xzf .carry3/$kind.tar.gz -C .cache/hgemm
    for rotate in 1 64; do
      echo "== round $round $kind rotate=$rotate" >> $OUT/overhead.txt
      timeout 40 python3 -m kernels.overhead --set tables --shape 64x4096x64 --acc f32 --b-layout col --rotate $rotate \
        --calls 2000 >> $OUT/overhead.txt 2>&1
    done
  done
done
echo "done at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^==|C fast path|torch.matmul" $OUT/overhead.txt
