#!/usr/bin/env bash
# HGEMM benchmark with CUDA-L2's flags (see tuner/eval_cli.py and docs/tuner.md), plus --grid and --timing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi
# relative --base_dir / --grid stay relative to the caller's directory
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m tuner.eval_cli "$@"
