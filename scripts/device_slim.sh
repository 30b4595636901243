#!/usr/bin/env bash
# The device tool sends the working tree (tracked files included) and the carried paths, 64 MiB in all; the tracked
# benchmark records alone are ~42 MB. Before a device call, move the benchmark folders the call does not read out of
# the tree; after it, move them back:
#   bash scripts/device_slim.sh out [KEEP ...]   # KEEP: folder names under benchmarks/ that stay (e.g. h200-2026-12-01-s11)
#   bash scripts/device_slim.sh back
# HOLD (default /tmp/hgemm_bench_hold) keeps them in between; `back` refuses to leave tracked files deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
HOLD=${HOLD:-/tmp/hgemm_bench_hold}
case "${1:-}" in
  out)
    shift; mkdir -p "$HOLD"
    for d in benchmarks/*/; do
      name=$(basename "$d")
      [[ " $* " == *" $name "* ]] && continue
      mv "$d" "$HOLD/"
    done
    echo "moved to $HOLD: $(ls "$HOLD" | tr '\n' ' ')"
    # One sum over every file: `xargs du -c` splits long lists into several runs, each with its own total.
    echo "tracked files left: $(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END {print s}') bytes";;
  back)
    [ -d "$HOLD" ] && for d in "$HOLD"/*/; do [ -d "$d" ] && mv "$d" benchmarks/; done
    rmdir "$HOLD" 2>/dev/null || true
    deleted=$(git ls-files --deleted | head -5)
    if [ -n "$deleted" ]; then echo "tracked files still missing, e.g.: $deleted" >&2; exit 1; fi
    echo "benchmarks back: $(ls benchmarks | wc -l) folders";;
  *) echo "usage: $0 out [KEEP ...] | back" >&2; exit 2;;
esac
