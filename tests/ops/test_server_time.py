"""loadtest.server_time: the service's own view of a load run, from one /metrics scrape or split by ramp step from
the scrapes loadtest.scrape took during it."""
import math

import pytest

from loadtest._ramp import StepStats
from loadtest.scrape import MARK, keep, split_scrapes
from loadtest.server_time import interpolated, main, per_step, quantile, step_table, summarize

SCRAPE = """
# TYPE hgemm_request_duration_seconds histogram
hgemm_request_duration_seconds_bucket{endpoint="/v1/hgemm",le="0.001"} 10.0
hgemm_request_duration_seconds_bucket{endpoint="/v1/hgemm",le="0.005"} 90.0
hgemm_request_duration_seconds_bucket{endpoint="/v1/hgemm",le="0.05"} 100.0
hgemm_request_duration_seconds_bucket{endpoint="/v1/hgemm",le="+Inf"} 100.0
hgemm_request_duration_seconds_sum{endpoint="/v1/hgemm"} 0.3
hgemm_request_duration_seconds_count{endpoint="/v1/hgemm"} 100.0
hgemm_request_duration_seconds_bucket{endpoint="/metrics",le="0.001"} 5.0
hgemm_request_duration_seconds_bucket{endpoint="/metrics",le="+Inf"} 5.0
hgemm_request_duration_seconds_sum{endpoint="/metrics"} 0.001
hgemm_request_duration_seconds_count{endpoint="/metrics"} 5.0
# TYPE hgemm_batch_size histogram
hgemm_batch_size_bucket{le="1.0"} 2.0
hgemm_batch_size_bucket{le="8.0"} 10.0
hgemm_batch_size_bucket{le="+Inf"} 10.0
hgemm_batch_size_sum 50.0
hgemm_batch_size_count 10.0
"""


def test_request_time_of_the_gemm_endpoint_only_and_batch_sizes():
    lines = summarize(SCRAPE)
    assert lines[0] == "server hgemm_request_duration_seconds: n=100 mean=3.00 ms p50<=5 ms p99<=50 ms"
    assert lines[1] == "server hgemm_batch_size: n=10 mean=5.00 p50<=8 p99<=8"


def test_quantile_is_the_upper_bound_of_its_bucket():
    buckets = [(1.0, 10.0), (2.0, 50.0), (4.0, 100.0)]
    assert quantile(buckets, 0.1) == 1.0 and quantile(buckets, 0.5) == 2.0 and quantile(buckets, 0.99) == 4.0
    assert summarize("") == []


def test_batch_phases_get_one_line_each():
    scrape = """
# TYPE hgemm_batch_phase_seconds histogram
hgemm_batch_phase_seconds_bucket{phase="stage_in",le="0.001"} 3.0
hgemm_batch_phase_seconds_bucket{phase="stage_in",le="+Inf"} 4.0
hgemm_batch_phase_seconds_sum{phase="stage_in"} 0.004
hgemm_batch_phase_seconds_count{phase="stage_in"} 4.0
hgemm_batch_phase_seconds_bucket{phase="off_cpu",le="0.001"} 0.0
hgemm_batch_phase_seconds_bucket{phase="off_cpu",le="0.01"} 4.0
hgemm_batch_phase_seconds_bucket{phase="off_cpu",le="+Inf"} 4.0
hgemm_batch_phase_seconds_sum{phase="off_cpu"} 0.02
hgemm_batch_phase_seconds_count{phase="off_cpu"} 4.0
"""
    assert summarize(scrape) == [
        "server hgemm_batch_phase_seconds{phase=stage_in}: n=4 mean=1.00 ms p50<=1 ms p99<=inf ms",
        "server hgemm_batch_phase_seconds{phase=off_cpu}: n=4 mean=5.00 ms p50<=10 ms p99<=10 ms"]


def scrape_at(requests: float, fast: float, seconds_sum: float, batches: float) -> str:
    """A cumulative scrape: `requests` /v1/hgemm requests of which `fast` took <= 1 ms, the rest <= 5 ms."""
    return f"""
# HELP hgemm_request_duration_seconds request latency
# TYPE hgemm_request_duration_seconds histogram
hgemm_request_duration_seconds_bucket{{endpoint="/v1/hgemm",le="0.001"}} {fast}
hgemm_request_duration_seconds_bucket{{endpoint="/v1/hgemm",le="0.005"}} {requests}
hgemm_request_duration_seconds_bucket{{endpoint="/v1/hgemm",le="+Inf"}} {requests}
hgemm_request_duration_seconds_sum{{endpoint="/v1/hgemm"}} {seconds_sum}
hgemm_request_duration_seconds_count{{endpoint="/v1/hgemm"}} {requests}
# TYPE hgemm_batch_size histogram
hgemm_batch_size_bucket{{le="1.0"}} {batches}
hgemm_batch_size_bucket{{le="+Inf"}} {batches}
hgemm_batch_size_sum {batches}
hgemm_batch_size_count {batches}
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.0
"""


def step(target: float, start: float, end: float) -> StepStats:
    return StepStats(0, target, 1, 10.0, 0.0, 0.0, start, end, 0, 0, 2.0, 3.0, 4.0, 2.0, 5.0, 0.0)


def test_keep_drops_other_families_and_blocks_split_back_by_time():
    kept = keep(scrape_at(1, 1, 0.001, 1))
    assert "process_cpu_seconds_total" not in kept and "# TYPE hgemm_batch_size histogram" in kept
    text = f"{MARK}100.0\n{kept}\n{MARK}100.5\n{kept}\n"
    assert [t for t, _ in split_scrapes(text)] == [100.0, 100.5]


def test_each_step_is_the_difference_of_the_scrapes_around_its_window():
    scrapes = [(99.0, scrape_at(0, 0, 0.0, 0)), (100.0, scrape_at(10, 10, 0.005, 10)),
               (106.0, scrape_at(110, 70, 0.305, 60)), (107.0, scrape_at(130, 70, 0.405, 70))]
    rows = per_step(scrapes, [step(10, 100.2, 105.9), step(20, 106.5, 106.9), step(30, 107.5, 110.0)])
    assert len(rows) == 2  # the third window has no scrape after it
    first = rows[0]  # the scrapes at 100 (the last before the window) and 106 (the first after): 100 requests
    assert first["request_duration_seconds.n"] == 100 and first["seconds"] == 6.0
    assert first["request_duration_seconds.mean"] == pytest.approx(3.0)
    # the median lies in the <= 1 ms bucket (60 of 100): interpolated from 0, as histogram_quantile does
    assert first["request_duration_seconds.p50"] == pytest.approx(50 / 60)
    second = rows[1]  # scrapes at 106 and 107: 20 requests, all in (1, 5] ms
    assert second["request_duration_seconds.n"] == 20 and second["batch_size.n"] == 10
    assert second["request_duration_seconds.p99"] == pytest.approx(1 + 4 * 19.8 / 20)
    table = step_table(rows)
    assert table.count("\n") == 3 and "| 10 | 2 / 4 |" in table


def test_interpolated_quantiles_and_the_inf_bucket():
    assert interpolated([(1.0, 10.0), (2.0, 20.0)], 0.75) == pytest.approx(1.5)
    assert interpolated([(1.0, 10.0), (math.inf, 20.0)], 0.99) == 1.0
    assert math.isnan(interpolated([], 0.5))


def test_cli_per_step_writes_the_table(tmp_path):
    from loadtest._ramp import write_steps

    scrapes = tmp_path / "s.txt"
    scrapes.write_text("".join(f"{MARK}{t}\n{keep(text)}\n" for t, text in
                               [(99.0, scrape_at(0, 0, 0.0, 0)), (106.0, scrape_at(110, 70, 0.305, 60))]))
    write_steps(str(tmp_path / "x_steps.csv"), [step(10, 100.0, 105.0)])
    out = tmp_path / "x_server_steps.md"
    assert main(["--scrapes", str(scrapes), "--steps", str(tmp_path / "x_steps.csv"), "--out", str(out)]) == 0
    assert out.read_text().startswith("| target QPS |")
    write_steps(str(tmp_path / "late_steps.csv"), [step(10, 200.0, 205.0)])  # after the last scrape
    assert main(["--scrapes", str(scrapes), "--steps", str(tmp_path / "late_steps.csv")]) == 1
