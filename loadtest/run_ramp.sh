#!/usr/bin/env bash
# Runs one headless Locust ramp against a service that is already running, then the saturation report.
# Starts nothing else (no service, no Prometheus).
#
#   loadtest/run_ramp.sh HOST SCENARIO [OUT_DIR] [-- extra locust options]
#   loadtest/run_ramp.sh http://127.0.0.1:8000 resident out/h200 -- --processes 4
#
# Ramp knobs come from the environment (defaults in loadtest/locustfile.py): LOCUST_RAMP_START (50), LOCUST_RAMP_STOP
# (500), LOCUST_RAMP_STEP (50) or LOCUST_RAMP_TARGETS (a QPS list), LOCUST_STEP_DURATION (30 s), LOCUST_STEP_WARMUP (5 s),
# LOCUST_USER_RATE (10 req/s per user), LOCUST_SHAPE (64x4096x64), LOCUST_API_KEY; LOCUST=path/to/locust,
# PYTHON=path/to/python. Writes OUT_DIR/SCENARIO_{stats,stats_history,failures,exceptions,steps}.csv and
# OUT_DIR/SCENARIO_report.{md,json,png}. Exit status: the report's (0 = SLO held; see loadtest/report.py).
# While Locust runs, HOST/metrics is scraped every SCRAPE_INTERVAL s (0.5; 0 = off) into SCENARIO_server_scrapes.txt,
# and SCENARIO_server_steps.md splits the service's own histograms by step (python -m loadtest.server_time --steps).
set -euo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
host=$1; scenario=$2; shift 2
out_dir=loadtest/results
if [ $# -gt 0 ] && [ "$1" != "--" ]; then out_dir=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi

repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$repo/.venv/bin/python}
locust=${LOCUST:-$(dirname "$python")/locust}
mkdir -p "$out_dir"
prefix=$out_dir/$scenario

cd "$repo"
scraper=
if [ "${SCRAPE_INTERVAL:-0.5}" != 0 ]; then
  rm -f "${prefix}_server_scrapes.txt"
  "$python" -m loadtest.scrape "$host/metrics" "${prefix}_server_scrapes.txt" --interval "${SCRAPE_INTERVAL:-0.5}" &
  scraper=$!
  trap 'kill $scraper 2>/dev/null || true' EXIT
fi
# Locust exits 1 when any request failed; the report judges the run, so its status is what we return.
"$locust" -f loadtest/ --headless --host "$host" --scenario "$scenario" --csv "$prefix" --only-summary \
  --loglevel "${LOCUST_LOGLEVEL:-INFO}" "$@" || echo "locust exited with status $? (failures are in the report)" >&2
if [ -n "$scraper" ]; then
  sleep "${SCRAPE_INTERVAL:-0.5}"; sleep 0.2  # one more scrape after the last step's window
  kill $scraper 2>/dev/null; wait $scraper 2>/dev/null || true
  "$python" -m loadtest.server_time --scrapes "${prefix}_server_scrapes.txt" --steps "${prefix}_steps.csv" \
    --out "${prefix}_server_steps.md" > /dev/null || echo "no per-step server times (no /metrics at $host?)" >&2
fi
"$python" -m loadtest.report --csv-prefix "$prefix" --title "${REPORT_TITLE:-Load ramp: $scenario against $host}"
