"""loadtest.server_time: the service's own view of a load run, from one /metrics scrape."""
from loadtest.server_time import quantile, summarize

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
