"""A dynamic batcher, one small mechanism (in the spirit of Ray Serve's `@serve.batch`).

`submit(item)` enqueues an item and awaits its result. One worker coroutine gathers up to `max_batch_size` items, or
waits at most `max_queue_delay_s` after the first item of a batch arrived, then runs `run_batch(items)` on a dedicated
thread (the event loop stays free) and hands each result back through its future. It waits only for requests it knows
are on their way: handlers wrap reading and decoding a request in `arriving()`, and a batch leaves as soon as none is
(a lone request does not pay the delay; requests that came in while the last batch ran are already queued). The
queue is bounded (`QueueFull` when full), each request has a deadline (`RequestTimeout`), and `close()` drains: every
accepted item is answered.
"""
from __future__ import annotations

import asyncio
import collections
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence


class QueueFull(Exception):
    pass


class Closed(Exception):
    pass


class RequestTimeout(Exception):
    pass


class BatchObserver(Protocol):
    def on_queue_depth(self, depth: int) -> None: ...
    def on_batch(self, size: int, queue_waits_s: Sequence[float]) -> None: ...


@dataclass(slots=True)
class _Pending:
    item: Any
    future: asyncio.Future
    enqueued_at: float = field(default_factory=time.perf_counter)


class _Arrival:
    """The context manager `Batcher.arriving()` returns: counts a request in while it is read, out when it is done."""
    __slots__ = ("_batcher",)

    def __init__(self, batcher: "Batcher"):
        self._batcher = batcher

    def __enter__(self) -> None:
        self._batcher._arriving += 1

    def __exit__(self, *exc) -> None:
        self._batcher._arrived()


def _expire(future: asyncio.Future, timeout_s: float) -> None:
    if not future.done():  # the worker skips done futures, so an expired item that has not started never runs
        future.set_exception(RequestTimeout(f"no result within {timeout_s:g} s"))


class Batcher:
    def __init__(self, run_batch: Callable[[list[Any]], list[Any]], *, max_batch_size: int, max_queue_delay_s: float,
                 capacity: int, timeout_s: float, observers: Sequence[BatchObserver] = (), gather: str = "arriving"):
        """`run_batch(items)` returns one entry per item: its result, or an exception instance for that item only.
        `gather`: "arriving" waits (at most the delay) only while a request is arriving; "delay" always waits the
        delay for a full batch, which suits closed-loop clients that send again as soon as they are answered."""
        if gather not in ("arriving", "delay"):
            raise ValueError(f"gather must be 'arriving' or 'delay', not {gather!r}")
        self._run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_queue_delay_s = max_queue_delay_s
        self._always_wait = gather == "delay"
        self.capacity = capacity
        self.timeout_s = timeout_s
        self.observers = list(observers)
        self._queue: collections.deque[_Pending] = collections.deque()
        # The worker sleeps on one future; submit wakes it only when it has something to do: on the first arrival
        # when idle, and when the batch is full while gathering (not on every arrival: each wake-up costs a loop turn).
        self._wakeup: asyncio.Future | None = None
        self._gathering = False
        self._arriving = 0  # requests being read or decoded that will be submitted next (see arriving())
        self._arrival = _Arrival(self)
        self._closed = False
        self._worker: asyncio.Task | None = None
        # One thread: batches run one after another; the next batch gathers while this one computes.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hgemm-batch")

    @property
    def depth(self) -> int:
        return len(self._queue)

    def arriving(self) -> "_Arrival":
        """Wrap the reading and decoding of a request that will be submitted right after (`with b.arriving():`):
        while any such request is in progress, a gathering batch waits for it (up to the delay); when none is, the
        batch leaves at once. Leave the block before awaiting `submit` (the item is enqueued in the same loop turn).
        One reusable object, not a generator per request: this runs on the event loop for every request."""
        return self._arrival

    def _arrived(self) -> None:
        self._arriving -= 1
        if self._gathering and not self._keep_gathering():
            self._wake()

    def start(self) -> None:
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._work(), name="hgemm-batcher")

    async def submit(self, item: Any) -> Any:
        if self._closed:
            raise Closed("the service is shutting down")
        if len(self._queue) >= self.capacity:
            self._drop_finished()
            if len(self._queue) >= self.capacity:
                raise QueueFull(f"the queue is full ({self.capacity} requests waiting)")
        loop = asyncio.get_running_loop()
        pending = _Pending(item, loop.create_future())
        self._queue.append(pending)
        self._notify_depth()
        if not self._gathering or len(self._queue) >= self.max_batch_size or not self._keep_gathering():
            self._wake()
        # a plain timer instead of asyncio.wait_for, which adds a future and callbacks per request
        timer = loop.call_later(self.timeout_s, _expire, pending.future, self.timeout_s)
        try:
            return await pending.future
        finally:
            timer.cancel()

    async def close(self) -> None:
        """Stop accepting, answer everything already accepted, stop the worker."""
        self._closed = True
        self._wake()
        if self._worker is not None:
            await self._worker
        self._executor.shutdown(wait=True)

    async def _work(self) -> None:
        while True:
            while not self._queue:
                if self._closed:
                    return
                await self._sleep()
            await self._gather()
            batch = self._take()
            if batch:
                await self._dispatch(batch)

    async def _gather(self) -> None:
        """Wait until a full batch is queued, no request is arriving, the first item's delay is spent, or we are
        draining."""
        deadline = self._queue[0].enqueued_at + self.max_queue_delay_s
        self._gathering = True
        try:
            while len(self._queue) < self.max_batch_size and self._keep_gathering() and not self._closed:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    return
                await self._sleep(remaining)
        finally:
            self._gathering = False

    def _keep_gathering(self) -> bool:
        """Whether a batch short of full should wait on (up to the delay): in `delay` mode always, else while a
        request is arriving."""
        return self._always_wait or self._arriving > 0

    async def _sleep(self, timeout_s: float | None = None) -> None:
        """Until `_wake()` or `timeout_s` passed."""
        loop = asyncio.get_running_loop()
        self._wakeup = loop.create_future()
        timer = loop.call_later(timeout_s, self._wake) if timeout_s is not None else None
        try:
            await self._wakeup
        finally:
            self._wakeup = None
            if timer is not None:
                timer.cancel()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    def _take(self) -> list[_Pending]:
        batch: list[_Pending] = []
        while self._queue and len(batch) < self.max_batch_size:
            pending = self._queue.popleft()
            if not pending.future.done():  # skip requests that already timed out
                batch.append(pending)
        self._notify_depth()
        return batch

    async def _dispatch(self, batch: list[_Pending]) -> None:
        started = time.perf_counter()
        for observer in self.observers:
            observer.on_batch(len(batch), [started - p.enqueued_at for p in batch])
        items = [p.item for p in batch]
        try:
            results = await asyncio.get_running_loop().run_in_executor(self._executor, self._run_batch, items)
            if len(results) != len(batch):
                raise RuntimeError(f"run_batch returned {len(results)} results for {len(batch)} items")
        except Exception as error:  # the whole batch failed: every item gets the error
            results = [error] * len(batch)
        for pending, result in zip(batch, results):
            if pending.future.done():
                continue
            if isinstance(result, BaseException):
                pending.future.set_exception(result)
            else:
                pending.future.set_result(result)

    def _drop_finished(self) -> None:
        self._queue = collections.deque(p for p in self._queue if not p.future.done())
        self._notify_depth()

    def _notify_depth(self) -> None:
        for observer in self.observers:
            observer.on_queue_depth(len(self._queue))
