"""Run by test_loadtest_report.py in a child process: Locust monkey-patches the interpreter (gevent) on import, which
must not happen inside the pytest process. Requests named by the ramp's step are logged on two "workers" (Locust's
real RequestStats), shipped to a "master" through Locust's own report_to_master / worker_report listeners in several
reports, and turned into per-step rows there."""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from locust.event import Events  # noqa: E402
from locust.stats import RequestStats, setup_distributed_stats_event_listeners  # noqa: E402

from loadtest._ramp import plan_steps, request_name, step_rows  # noqa: E402


class Node:
    def __init__(self):
        self.events = Events()
        self.stats = RequestStats()
        setup_distributed_stats_event_listeners(self.events, self.stats)

    def send(self, base: str, run_time: float, ms: int, failed: bool = False) -> None:
        name = request_name(base, STEPS, run_time)   # named when sent, logged when done: as the users do
        self.stats.log_request("POST", name, ms, 10)
        if failed:
            self.stats.log_error("POST", name, "boom")

    def report_to(self, master: "Node", client_id: str) -> None:
        data: dict = {}
        self.events.report_to_master.fire(client_id=client_id, data=data)
        master.events.worker_report.fire(client_id=client_id, data=data)


STEPS = plan_steps(10, 20, 10, 10, 10, 2)   # 10 QPS/1 user for 0-10 s, 20 QPS/2 users for 10-20 s; 2 s warm-up


def check_step_rows() -> None:
    master, first, second = Node(), Node(), Node()
    for ms in (500, 600):                                   # warm-up of step 0: must not count
        first.send("a", 1.0, ms)
    for ms in range(1, 51):                                 # step 0, measured: 1..100 ms over two workers and names
        first.send("a", 2.0 + ms / 10, ms)
    first.report_to(master, "w1")                           # a report in the middle of the step
    for ms in range(51, 101):
        second.send("b", 9.99 - ms / 1000, ms, failed=(ms == 77))
    second.send("b", 10.5, 900)                             # step 1's warm-up
    second.report_to(master, "w2")
    for ms in (3, 4, 5):                                    # step 1, measured; only in the final reports
        first.send("a", 15.0, ms)
    second.send("b", 19.9, 7)
    first.send("a", 20.1, 800)                              # the drain after the last step
    first.report_to(master, "w1")
    second.report_to(master, "w2")

    rows = step_rows(STEPS, 10.0, master.stats, started_unix=1000.0, cpu={0: 55.0})
    zero, one = rows
    assert (zero.requests, zero.failures) == (100, 1), zero
    # Locust's percentile: the smallest t with fewer than n·(1-q) requests slower than t, i.e. rank floor(n·q)+1
    # of 1..100 ms: 51, 96, 100. The warm-up's 500 and 600 ms must not appear.
    assert (zero.p50_ms, zero.p95_ms, zero.p99_ms, zero.max_ms) == (51, 96, 100, 100), zero
    assert zero.avg_ms == 50.5
    assert (zero.measure_start, zero.measure_end, zero.seconds) == (1002.0, 1010.0, 8.0)
    assert zero.generator_cpu_percent == 55.0 and one.generator_cpu_percent == 0.0
    assert (one.step, one.target_qps, one.users, one.requests, one.failures) == (1, 20.0, 2, 4, 0), one
    assert (one.p50_ms, one.max_ms, one.avg_ms) == (5, 7, 4.75), one   # rank floor(4·0.5)+1 of 3, 4, 5, 7
    assert (one.measure_start, one.measure_end) == (1012.0, 1020.0)
    assert master.stats.total.num_requests == 100 + 2 + 1 + 4 + 1   # nothing lost or counted twice overall


def check_an_empty_step_has_no_numbers() -> None:
    master = Node()
    rows = step_rows(STEPS, 10.0, master.stats, started_unix=0.0, cpu={})
    assert [r.requests for r in rows] == [0, 0] and all(math.isnan(r.p99_ms) for r in rows)


if __name__ == "__main__":
    check_step_rows()
    check_an_empty_step_has_no_numbers()
    print("step rows checks passed")
