#!/usr/bin/env bash
# The service on the H200: GPU tests of the service, a real server with curl checks, the batching benchmark.
#   OUT=dir bash scripts/h200_service.sh
set -uo pipefail
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
source scripts/device_env.sh
echo "== service gpu tests"
timeout 120 python3 -m pytest tests/service -m gpu -q -o timeout=100 -p no:cacheprovider > "$OUT/svc_tests.log" 2>&1
tail -3 "$OUT/svc_tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/svc_tests.log" | head
echo "== server on the GPU"
HGEMM_BACKEND=gpu HGEMM_PORT=8000 python3 -m service > "$OUT/svc_server.log" 2>&1 &
for i in $(seq 60); do curl -sf localhost:8000/health/ready >/dev/null && break; sleep 1; done
curl -s localhost:8000/health/ready; echo
curl -s localhost:8000/v1/kernels | head -c 600; echo
curl -s localhost:8000/v1/hgemm -H 'content-type: application/json' \
  -d '{"a": {"data": [[1, 2, 3], [4, 5, 6]]}, "b": {"data": [[1, 0], [0, 1], [1, 1]]}}'; echo
kill %1; wait
echo "== batching benchmark"
timeout ${BENCH_TIMEOUT:-150} python3 -m service.bench_batching --backend gpu --seconds ${BENCH_SECONDS:-8} --procs 4 --clients 32 \
  > "$OUT/bench_batching.log" 2>&1; tail -12 "$OUT/bench_batching.log"
