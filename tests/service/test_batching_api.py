"""Batching through the HTTP API: 8 concurrent requests form one batch, a slow client does not hold up the others,
a full queue answers 503 with Retry-After, a stuck request 504, and shutdown answers every accepted request."""
import asyncio

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from service_helpers import GatedCpuBackend, assert_close, binary_headers, fp16, reference, run, serving


def sample(app, name: str, **labels) -> float:
    content, _ = app.state.hgemm.metrics.render()
    for family in text_string_to_metric_families(content.decode()):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError(name)


def post_binary(client, a, b, layout="row", **extra):
    m, k = a.shape
    n = b.shape[1] if layout == "row" else b.shape[0]
    return client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(),
                       headers=binary_headers(m=m, n=n, k=k, b_layout=layout, **extra))


def test_eight_concurrent_requests_form_one_batch(rng):
    async def scenario():
        # a delay far beyond the test's run time: only a full batch of 8 can be dispatched before it
        async with serving(max_batch_size=8, max_queue_delay_us=10_000_000) as (client, app):
            # 8 x ~4M multiply-adds: enough that the CPU backend spreads the groups over its thread pool
            pairs = [(fp16(rng, 60 + i, 256), fp16(rng, 280, 256)) for i in range(8)]
            answers = await asyncio.gather(*(post_binary(client, a, b, "col") for a, b in pairs))
            for (a, b), r in zip(pairs, answers):
                assert r.status_code == 200 and r.headers["x-batch-size"] == "8"
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(a.shape[0], 280), reference(a, b, "col"))
            assert sample(app, "hgemm_batch_size_count") == 1
            assert sample(app, "hgemm_batch_size_bucket", le="7.0") == 0
            assert sample(app, "hgemm_batch_size_bucket", le="8.0") == 1
    run(scenario())


def test_a_slow_client_does_not_block_the_others(rng):
    """One client trickles its body and stalls; the batch it would have joined is dispatched after the delay."""
    async def scenario():
        async with serving(max_batch_size=8, max_queue_delay_us=20_000) as (client, _):
            a, b = fp16(rng, 4, 8), fp16(rng, 8, 4)
            release = asyncio.Event()

            async def trickle():
                yield a.tobytes()
                await release.wait()  # stalls until every other request has its answer
                yield b.tobytes()

            slow = asyncio.ensure_future(client.post("/v1/hgemm", content=trickle(),
                                                      headers=binary_headers(m=4, n=4, k=8)))
            others = await asyncio.gather(*(post_binary(client, fp16(rng, 3, 8), fp16(rng, 8, 5)) for _ in range(3)))
            assert [r.status_code for r in others] == [200, 200, 200]
            assert not slow.done()
            release.set()
            r = await slow
            assert r.status_code == 200
            assert_close(np.frombuffer(r.content, dtype="<f2").reshape(4, 4), reference(a, b, "row"))
    run(scenario())


def test_full_queue_answers_503_with_retry_after(rng):
    async def scenario():
        backend = GatedCpuBackend()
        async with serving(backend, max_batch_size=1, max_queue_delay_us=0, queue_capacity=2) as (client, app):
            backend.arm()
            a, b = fp16(rng, 2, 4), fp16(rng, 4, 2)
            first = asyncio.ensure_future(post_binary(client, a, b))
            await asyncio.to_thread(backend.entered.wait, 10)  # the worker holds request 1 at the gate
            queued = [asyncio.ensure_future(post_binary(client, a, b)) for _ in range(2)]
            while app.state.hgemm.batcher.depth < 2:
                await asyncio.sleep(0.005)
            r = await post_binary(client, a, b)
            assert r.status_code == 503 and r.headers["retry-after"] == "1"
            assert "queue is full" in r.json()["detail"]
            backend.gate.set()
            assert [x.status_code for x in await asyncio.gather(first, *queued)] == [200, 200, 200]
            assert sample(app, "hgemm_rejected_total", reason="queue_full") == 1
            assert sample(app, "hgemm_requests_total", endpoint="/v1/hgemm", method="POST", status="503") == 1
    run(scenario())


def test_a_request_past_its_deadline_gets_504(rng):
    async def scenario():
        backend = GatedCpuBackend()
        async with serving(backend, max_batch_size=1, max_queue_delay_us=0, request_timeout_s=0.2) as \
                (client, app):
            backend.arm()
            r = await post_binary(client, fp16(rng, 2, 4), fp16(rng, 4, 2))
            assert r.status_code == 504 and "HGEMM_REQUEST_TIMEOUT_S" in r.json()["detail"]
            backend.gate.set()
            assert sample(app, "hgemm_rejected_total", reason="timeout") == 1
    run(scenario())


def test_shutdown_answers_every_accepted_request(rng):
    async def scenario():
        backend = GatedCpuBackend()
        pairs = [(fp16(rng, 3, 5), fp16(rng, 5, 2)) for _ in range(6)]
        async with serving(backend, max_batch_size=2, max_queue_delay_us=0) as (client, app):
            backend.arm()
            tasks = [asyncio.ensure_future(post_binary(client, a, b)) for a, b in pairs]
            await asyncio.to_thread(backend.entered.wait, 10)
            while app.state.hgemm.batcher.depth < 4:
                await asyncio.sleep(0.005)
            stopping = asyncio.ensure_future(app.state.hgemm.stop())  # what the lifespan runs on shutdown
            await asyncio.sleep(0.02)
            late = await post_binary(client, *pairs[0])
            assert late.status_code == 503  # not ready any more
            backend.gate.set()
            await stopping
            answers = await asyncio.gather(*tasks)
        for (a, b), r in zip(pairs, answers):
            assert r.status_code == 200
            assert_close(np.frombuffer(r.content, dtype="<f2").reshape(3, 2), reference(a, b, "row"))
        assert sum(backend.batches) == 6
    run(scenario())


def test_a_result_reports_the_accumulator_the_dispatcher_really_used():
    """An f16 request that the dispatcher ran with fp32 accumulation (a table's more precise choice, or the cuBLAS
    fallback) says acc_computed=f32: the batch bookkeeping is the base Backend's."""
    from service.backends import Backend
    from service.jobs import Job, Selection

    class Recorded(Backend):
        def _run_groups(self, groups):
            return [(np.zeros((g.m, 8), np.float16), Selection("cublas", "no_tuned_kernel", "f32" if g.acc == "f16"
                                                                else None)) for g in groups]

    a, b = np.ones((4, 8), np.float16), np.ones((8, 8), np.float16)
    results = Recorded().run_batch([Job(a, b, "row", "f16"), Job(a, b, "row", "f32")])
    assert [r.acc_computed for r in results] == ["f32", "f32"]
    assert results[0].selection.acc == "f32" and results[1].selection.acc is None
