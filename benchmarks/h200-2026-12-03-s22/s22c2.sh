#!/usr/bin/env bash
# Session 22, call 2 (nvidia-h200, warm after call 1; carry .whl + .carry1 + .carry2 as call 1): the skinny sweep of
# the f16 col entries (skinny_col_f16.txt, worst first by session 21's f16 col grid) and, when LIST32 names one, the
# f32 shapes call 1's deadline left (the same variants, beside the tables' choice, torch.matmul and cuBLAS TN).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s22
left=$(( ${END:-570} - $(el) - 25 ))
if [ -n "${LIST32:-}" ]; then accs="fp16 fp32"; else accs=fp16; fi
OUT=$OUT/sweep_col LIST_fp32=${LIST32:-none} LIST_fp16=$S/skinny_col_f16.txt B_LAYOUT=col ACCS="$accs" \
  DEADLINE_fp16=$(( left * ${F16_SHARE:-100} / 100 )) DEADLINE_fp32=$(( left * (100 - ${F16_SHARE:-100}) / 100 )) \
  SKIP_ENV=1 bash scripts/h200_twin_sweep.sh >> $OUT/rc.txt 2>&1
echo "skinny sweep done at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt
pack_out call2
