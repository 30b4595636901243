"""/metrics after traffic: every Contract 4 name is exported, and the values count what happened."""
import asyncio

from prometheus_client.parser import text_string_to_metric_families

from service_helpers import binary_headers, fp16, run, serving

CONTRACT_FAMILIES = {  # name as the parser reports it (counters without _total) -> type
    "hgemm_requests": "counter", "hgemm_request_duration_seconds": "histogram", "hgemm_queue_wait_seconds": "histogram",
    "hgemm_compute_seconds": "histogram", "hgemm_batch_phase_seconds": "histogram", "hgemm_batch_size": "histogram", "hgemm_queue_depth": "gauge",
    "hgemm_queue_capacity": "gauge", "hgemm_inflight_requests": "gauge", "hgemm_fallbacks": "counter",
    "hgemm_kernel_selections": "counter", "hgemm_rejected": "counter", "hgemm_resident_operands": "gauge",
    "hgemm_resident_operand_bytes": "gauge", "hgemm_resident_budget_bytes": "gauge", "hgemm_ready": "gauge",
    "hgemm_backend_info": "gauge",
}


def scrape(text: str) -> tuple[dict, dict]:
    types, values = {}, {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for s in family.samples:
            values[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return types, values


def value(values, name, **labels):
    return values[(name, tuple(sorted(labels.items())))]


def test_metrics_after_traffic(rng):
    async def scenario():
        async with serving(queue_capacity=77, operand_budget_bytes=10_000, api_keys="key") as (client, _):
            auth = {"authorization": "Bearer key"}
            a, b = fp16(rng, 4, 8), fp16(rng, 8, 4)
            ok = [client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(), headers={**binary_headers(m=4, n=4, k=8),
                                                                                         **auth}) for _ in range(5)]
            assert [r.status_code for r in await asyncio.gather(*ok)] == [200] * 5
            assert (await client.post("/v1/hgemm", content=b"x", headers={**binary_headers(m=4, n=4, k=8),
                                                                          **auth})).status_code == 400
            assert (await client.post("/v1/hgemm", content=b"x", headers=binary_headers(m=1, n=1, k=1))).status_code \
                == 401
            w = fp16(rng, 8, 16)
            r = await client.post("/v1/operands", content=w.tobytes(), headers={**binary_headers(k=8, n=16), **auth})
            assert r.status_code == 201
            r = await client.get("/metrics")
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
            types, values = scrape(r.text)

            for name, kind in CONTRACT_FAMILIES.items():
                assert types.get(name) == kind, name
            assert value(values, "hgemm_requests_total", endpoint="/v1/hgemm", method="POST", status="200") == 5
            assert value(values, "hgemm_requests_total", endpoint="/v1/hgemm", method="POST", status="400") == 1
            assert value(values, "hgemm_requests_total", endpoint="/v1/hgemm", method="POST", status="401") == 1
            assert value(values, "hgemm_requests_total", endpoint="/v1/operands", method="POST", status="201") == 1
            assert value(values, "hgemm_request_duration_seconds_count", endpoint="/v1/hgemm") == 7
            assert value(values, "hgemm_kernel_selections_total", kernel="cpu_matmul") == 5
            assert value(values, "hgemm_fallbacks_total", reason="cpu_backend") == 5
            assert value(values, "hgemm_fallbacks_total", reason="no_tuned_kernel") == 0
            assert value(values, "hgemm_rejected_total", reason="invalid") == 1
            assert value(values, "hgemm_rejected_total", reason="unauthorized") == 1
            assert value(values, "hgemm_batch_size_sum") == 5  # warm-up runs outside the batcher
            assert value(values, "hgemm_queue_wait_seconds_count") == 5
            assert value(values, "hgemm_compute_seconds_count", backend="cpu") >= 1
            assert value(values, "hgemm_queue_depth") == 0 and value(values, "hgemm_inflight_requests") == 0
            assert value(values, "hgemm_queue_capacity") == 77
            assert value(values, "hgemm_resident_operands") == 1
            assert value(values, "hgemm_resident_operand_bytes") == w.nbytes
            assert value(values, "hgemm_resident_budget_bytes") == 10_000
            assert value(values, "hgemm_ready") == 1
            info = [k for k in values if k[0] == "hgemm_backend_info"]
            assert len(info) == 1 and dict(info[0][1])["backend"] == "cpu"
            buckets = sorted(float(dict(k[1])["le"]) for k in values
                             if k[0] == "hgemm_request_duration_seconds_bucket" and dict(k[1])["endpoint"] == "/v1/hgemm")
            assert sum(0.025 <= b <= 0.1 for b in buckets) >= 6  # dense around the 50 ms objective
            assert not any(k[0] == "hgemm_requests_total" and dict(k[1])["endpoint"] == "/v1/operands/op_x"
                           for k in values)
    run(scenario())


def test_batch_phases_of_the_backend_are_observed_per_batch(rng):
    from service.backends import PHASES, CpuBackend

    class PhasedCpuBackend(CpuBackend):  # the GPU backend's phase report, on the CPU
        def run_batch(self, jobs):
            self.phases = {phase: 0.001 * (i + 1) for i, phase in enumerate(PHASES)}
            return super().run_batch(jobs)

    async def scenario():
        async with serving(PhasedCpuBackend(num_threads=1)) as (client, _):
            a, b = fp16(rng, 4, 8), fp16(rng, 8, 4)
            for _ in range(3):
                r = await client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(),
                                      headers=binary_headers(m=4, n=4, k=8))
                assert r.status_code == 200
            _, values = scrape((await client.get("/metrics")).text)
            for i, phase in enumerate(PHASES):
                assert value(values, "hgemm_batch_phase_seconds_count", phase=phase) == 3
                assert abs(value(values, "hgemm_batch_phase_seconds_sum", phase=phase) - 0.003 * (i + 1)) < 1e-9
    run(scenario())


def test_unknown_paths_share_one_label():
    async def scenario():
        async with serving() as (client, _):
            for path in ("/nope", "/v1/operands/op_a/extra", "/x/y"):
                await client.get(path)
            types, values = scrape((await client.get("/metrics")).text)
            assert value(values, "hgemm_requests_total", endpoint="unmatched", method="GET", status="404") == 3
    run(scenario())


def test_fast_path_outcomes_are_read_at_scrape_time_and_absent_without_a_fast_path():
    from service.metrics import Metrics

    stats = {"hits": 5, "misses": 2, "entries": 1}
    metrics = Metrics()
    metrics.watch_fast_path(lambda: stats)
    text = metrics.render()[0].decode()
    assert 'hgemm_fastpath_calls_total{result="hit"} 5.0' in text
    assert 'hgemm_fastpath_calls_total{result="miss"} 2.0' in text and "hgemm_fastpath_entries 1.0" in text
    stats["hits"] = 9
    assert 'hgemm_fastpath_calls_total{result="hit"} 9.0' in metrics.render()[0].decode()
    quiet = Metrics()
    quiet.watch_fast_path(lambda: None)  # fast path off or unavailable: no series
    assert "hgemm_fastpath" not in quiet.render()[0].decode()
    broken = Metrics()
    broken.watch_fast_path(lambda: 1 / 0)  # a failing read never breaks the scrape
    text = broken.render()[0].decode()
    assert "hgemm_ready" in text and "hgemm_fastpath" not in text
