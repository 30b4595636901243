#!/usr/bin/env bash
# Load runs on the H200 host (device tool), from the repo root:  OUT=dir bash scripts/h200_load.sh [SCENARIO]
# The same Locust target-rate ramp (resident 64x4096x64 by default) against, in one session: the service with batching
# (max batch 8), the service without batching (max batch 1), and the naive baseline (FastAPI + torch.matmul/request);
# RUNS picks among batched batched_delay unbatched batched_gil unbatched_gil batched_workers unbatched_workers naive
# (default: batched unbatched naive).
# Returns summary.txt and one load_<name>.tar.gz per run (Locust CSVs, the report .md/.json/.png).
set -uo pipefail
SCENARIO=${1:-resident}
OUT=${OUT:-h200_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
W=/tmp/h200_load; rm -rf $W; mkdir -p $W
source scripts/device_env.sh
export PYTHON=${PYTHON:-python3} LOCUST=${LOCUST:-/tmp/site/bin/locust}
export LOCUST_RAMP_START=${RAMP_START:-50} LOCUST_RAMP_STEP=${RAMP_STEP:-450} LOCUST_RAMP_STOP=${RAMP_STOP:-3200}
export LOCUST_RAMP_TARGETS=${RAMP_TARGETS:-}   # e.g. 50,500,1000,1500,2000,2500,3000: overrides start/stop/step
export LOCUST_STEP_DURATION=${STEP_S:-8} LOCUST_STEP_WARMUP=${WARMUP_S:-2} LOCUST_USER_RATE=${USER_RATE:-10}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/summary.txt"
run() {  # name port command...
  local name=$1 port=$2; shift 2
  "$@" > $W/${name}_server.log 2>&1 &
  local pid=$!
  for i in $(seq 90); do curl -sf localhost:$port/health/ready >/dev/null && break; sleep 1; done
  echo "== $name ($SCENARIO) ready after ${i}s" | tee -a "$OUT/summary.txt"
  REPORT_TITLE="$SCENARIO ramp: $name (H200)" timeout 300 loadtest/run_ramp.sh http://127.0.0.1:$port $SCENARIO $W/$name \
    -- --processes ${LOCUST_PROCS:-4} > $W/${name}_locust.log 2>&1
  echo "report exit status $?" >> "$OUT/summary.txt"
  cat $W/$name/${SCENARIO}_report.md >> "$OUT/summary.txt" 2>/dev/null
  # the same steps as the service saw them (its histograms scraped during the run, split by step)
  cat $W/$name/${SCENARIO}_server_steps.md >> "$OUT/summary.txt" 2>/dev/null
  # the server's own view of the same run (the naive server has none): where a request's time went inside it
  if curl -sf localhost:$port/metrics > $W/${name}_metrics.txt; then
    python3 -m loadtest.server_time $W/${name}_metrics.txt | tee -a "$OUT/summary.txt"
  else
    rm -f $W/${name}_metrics.txt; touch $W/${name}_metrics.txt
  fi
  kill $pid; wait $pid 2>/dev/null
  tar czf "$OUT/load_${name}.tar.gz" -C $W $name ${name}_server.log ${name}_locust.log ${name}_metrics.txt
}
want() { case " ${RUNS:-batched unbatched naive} " in *" $1 "*) return 0;; esac; return 1; }
want batched && run batched 8000 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8000 python3 -m service
# the batcher always waiting HGEMM_MAX_QUEUE_DELAY_US for a full batch (the default waits only for arriving requests)
want batched_delay && run batched_delay 8005 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8005 HGEMM_BATCH_GATHER=delay \
  python3 -m service
want unbatched && run unbatched 8001 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8001 HGEMM_MAX_BATCH_SIZE=1 python3 -m service
# the same two with a 200 µs GIL switch interval (docs/notes.md: the event loop and the batch thread share the GIL)
want batched_gil && run batched_gil 8003 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8003 \
  HGEMM_GIL_SWITCH_INTERVAL_US=${GIL_US:-200} python3 -m service
want unbatched_gil && run unbatched_gil 8004 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8004 HGEMM_MAX_BATCH_SIZE=1 \
  HGEMM_GIL_SWITCH_INTERVAL_US=${GIL_US:-200} python3 -m service
# several worker processes on the one port (service/workers.py): WORKERS_N of them
want batched_workers && run batched_workers 8006 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8006 \
  HGEMM_WORKERS=${WORKERS_N:-2} python3 -m service
# batching off with the same worker processes: what batching buys at equal parallelism
want unbatched_workers && run unbatched_workers 8007 env HGEMM_BACKEND=${BACKEND:-gpu} HGEMM_PORT=8007 \
  HGEMM_WORKERS=${WORKERS_N:-2} HGEMM_MAX_BATCH_SIZE=1 python3 -m service
want naive && run naive 8002 python3 -m loadtest.naive_server --port 8002
cat "$OUT/summary.txt" | grep -vE "^\s*$" | tail -60
