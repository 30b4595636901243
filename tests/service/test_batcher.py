"""The batcher on its own, with plain-Python batch functions: batch formation, waiting only for arriving requests and
at most the delay, the bounded queue, deadlines, per-item failures and the drain."""
import asyncio
import threading

import pytest

from service.batcher import Batcher, Closed, QueueFull, RequestTimeout
from service_helpers import run


class Recorder:
    """A batch function that doubles numbers and records the batches it saw; fails items that are exceptions."""

    def __init__(self, gate: threading.Event | None = None):
        self.batches: list[list] = []
        self.gate = gate

    def __call__(self, items):
        if self.gate is not None:
            self.gate.wait(timeout=30)
        self.batches.append(list(items))
        return [item if isinstance(item, Exception) else item * 2 for item in items]


def make(run_batch, **kw):
    options = dict(max_batch_size=8, max_queue_delay_s=0.05, capacity=64, timeout_s=30)
    options.update(kw)
    return Batcher(run_batch, **options)


def started(**kw) -> tuple[Recorder, Batcher]:
    """A running batcher (inside the test's event loop) over a fresh Recorder."""
    recorder = Recorder()
    batcher = make(recorder, **kw)
    batcher.start()
    return recorder, batcher


def test_eight_concurrent_requests_form_one_batch():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=30)  # only a full batch can dispatch before the test times out
        results = await asyncio.gather(*(batcher.submit(i) for i in range(8)))
        await batcher.close()
        assert results == [2 * i for i in range(8)]
        assert recorder.batches == [list(range(8))]
    run(scenario())


def test_a_lone_request_with_nothing_arriving_leaves_at_once_not_after_the_delay():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=30)  # waiting for the delay would time the test out
        assert await asyncio.wait_for(batcher.submit(21), 5) == 42
        assert recorder.batches == [[21]]
        await batcher.close()
    run(scenario())


def test_a_batch_waits_for_a_request_still_arriving_and_takes_it_along():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=30)
        read = asyncio.Event()

        async def slow_request():  # as the handlers do: read and decode inside arriving(), then submit at once
            with batcher.arriving():
                await read.wait()
            return await batcher.submit(2)

        second = asyncio.ensure_future(slow_request())
        await asyncio.sleep(0)
        first = asyncio.ensure_future(batcher.submit(1))
        await asyncio.sleep(0.05)
        assert recorder.batches == []  # held for the arriving request
        read.set()
        assert await asyncio.wait_for(asyncio.gather(first, second), 5) == [2, 4]
        assert recorder.batches == [[1, 2]]
        await batcher.close()
    run(scenario())


def test_an_arriving_request_that_fails_releases_the_waiting_batch():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=30)

        async def bad_request():
            with batcher.arriving():
                await asyncio.sleep(0.05)
                raise ValueError("malformed body")  # never submitted

        first = asyncio.ensure_future(batcher.submit(1))
        with pytest.raises(ValueError):
            await asyncio.gather(bad_request(), asyncio.sleep(0))
        assert await asyncio.wait_for(first, 5) == 2
        assert recorder.batches == [[1]]
        await batcher.close()
    run(scenario())


def test_gather_delay_waits_for_a_full_batch_even_with_nothing_arriving():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=30, gather="delay", max_batch_size=2)
        first = asyncio.ensure_future(batcher.submit(1))
        await asyncio.sleep(0.05)
        assert recorder.batches == []  # waiting for the second item or the delay
        assert await asyncio.wait_for(asyncio.gather(first, batcher.submit(2)), 5) == [2, 4]
        assert recorder.batches == [[1, 2]]
        await batcher.close()
    run(scenario())


def test_an_unknown_gather_mode_is_refused():
    with pytest.raises(ValueError, match="gather"):
        make(Recorder(), gather="sometimes")


def test_the_delay_bounds_the_wait_for_a_request_that_keeps_arriving():
    async def scenario():
        recorder, batcher = started(max_queue_delay_s=0.05)
        with batcher.arriving():  # a slow upload that outlasts the delay
            assert await asyncio.wait_for(batcher.submit(21), 5) == 42
        assert recorder.batches == [[21]]
        await batcher.close()
    run(scenario())


def test_batches_never_exceed_max_batch_size_and_keep_order():
    async def scenario():
        gate = threading.Event()
        recorder = Recorder(gate)
        batcher = make(recorder, max_batch_size=4, max_queue_delay_s=0)
        batcher.start()
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in range(19)]
        await asyncio.sleep(0.05)
        gate.set()
        assert await asyncio.gather(*tasks) == [2 * i for i in range(19)]
        await batcher.close()
        assert all(1 <= len(batch) <= 4 for batch in recorder.batches)
        assert [item for batch in recorder.batches for item in batch] == list(range(19))
    run(scenario())


def test_full_queue_rejects_at_once():
    async def scenario():
        gate = threading.Event()
        batcher = make(Recorder(gate), max_batch_size=1, max_queue_delay_s=0, capacity=3)
        batcher.start()
        first = asyncio.ensure_future(batcher.submit(0))  # taken by the worker, blocked at the gate
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(batcher.submit(i)) for i in range(1, 4)]
        await asyncio.sleep(0)
        with pytest.raises(QueueFull):
            await batcher.submit(99)
        gate.set()
        assert await asyncio.gather(first, *queued) == [0, 2, 4, 6]
        await batcher.close()
    run(scenario())


def test_timeout_and_the_worker_skips_expired_items():
    async def scenario():
        gate = threading.Event()
        recorder = Recorder(gate)
        batcher = make(recorder, max_batch_size=1, max_queue_delay_s=0, timeout_s=0.1)
        batcher.start()
        blocked = asyncio.ensure_future(batcher.submit(1))
        await asyncio.sleep(0.02)
        with pytest.raises(RequestTimeout):
            await batcher.submit(2)  # waits behind the blocked batch past its deadline
        gate.set()
        with pytest.raises(RequestTimeout):
            await blocked
        await batcher.close()
        assert [2] not in recorder.batches  # an expired request is not computed
    run(scenario())


def test_one_failing_item_does_not_fail_its_batch():
    async def scenario():
        batcher = make(Recorder(), max_queue_delay_s=30, max_batch_size=3)
        batcher.start()
        results = await asyncio.gather(batcher.submit(1), batcher.submit(ValueError("bad item")), batcher.submit(3),
                                       return_exceptions=True)
        await batcher.close()
        assert results[0] == 2 and results[2] == 6 and isinstance(results[1], ValueError)
    run(scenario())


def test_a_crashing_batch_function_answers_every_item_with_the_error():
    def explode(items):
        raise RuntimeError("boom")

    async def scenario():
        batcher = make(explode, max_queue_delay_s=0)
        batcher.start()
        with pytest.raises(RuntimeError, match="boom"):
            await batcher.submit(1)
        await batcher.close()
    run(scenario())


def test_close_drains_every_accepted_request_then_refuses_new_ones():
    async def scenario():
        gate = threading.Event()
        recorder = Recorder(gate)
        batcher = make(recorder, max_batch_size=2, max_queue_delay_s=30)
        batcher.start()
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in range(7)]
        await asyncio.sleep(0.02)
        closing = asyncio.ensure_future(batcher.close())
        await asyncio.sleep(0.02)
        with pytest.raises(Closed):
            await batcher.submit(100)
        gate.set()
        await closing
        assert await asyncio.gather(*tasks) == [2 * i for i in range(7)]
        assert sum(len(batch) for batch in recorder.batches) == 7
    run(scenario())
