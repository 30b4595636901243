"""Several worker processes (HGEMM_WORKERS): what they share — resident operands, metrics, untuned-shape counts —
first as two registries / counters on one folder (two workers in one test process), then as the real thing: `python -m
service` with two workers on loopback, requests on fresh connections so that both workers answer."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from service.errors import ApiError
from service.operand_store import SharedOperandStore
from service.operands import OperandRegistry
from service.untuned import UntunedShapes
from service_helpers import assert_close, fp16, reference, wait_ready

ROOT = Path(__file__).resolve().parents[2]


def two_workers(tmp_path, budget=1 << 20):
    loads = []

    def loader(array):
        loads.append(array.shape)
        return ("device copy", array.copy())

    store = SharedOperandStore(tmp_path / "operands")
    return (OperandRegistry(budget, store, loader=loader), OperandRegistry(budget, SharedOperandStore(store.directory),
                                                                           loader=loader), loads)


def test_an_operand_registered_on_one_worker_serves_on_the_other_until_either_deletes_it(tmp_path, rng):
    first, second, loads = two_workers(tmp_path)
    b = fp16(rng, 40, 24)  # col: N=40, K=24
    op = first.add("first's copy", b.nbytes, "col", 24, 40, "w", array=b)
    assert loads == []  # the registering worker uses its own copy
    seen = second.get(op.id)
    assert loads == [(40, 24)] and (seen.k, seen.n, seen.b_layout, seen.name, seen.nbytes) == (24, 40, "col", "w",
                                                                                                 b.nbytes)
    assert np.array_equal(seen.tensor[1], b)
    assert second.get(op.id) is seen and loads == [(40, 24)]  # loaded once per worker
    assert [o.id for o in second.list()] == [op.id] and len(second) == 1 and second.used_bytes == b.nbytes

    assert second.remove(op.id).id == op.id
    for registry in (first, second):
        with pytest.raises(ApiError) as error:
            registry.get(op.id)
        assert error.value.status == 404
    assert first._operands == {} and len(first) == 0
    with pytest.raises(ApiError):
        first.remove(op.id)


def test_the_budget_counts_every_workers_operands_once(tmp_path, rng):
    b = fp16(rng, 32, 32)
    first, second, _ = two_workers(tmp_path, budget=2 * b.nbytes)
    first.add("x", b.nbytes, "row", 32, 32, None, array=b)
    second.add("y", b.nbytes, "row", 32, 32, None, array=b)
    with pytest.raises(ApiError) as error:
        first.add("z", b.nbytes, "row", 32, 32, None, array=b)
    assert error.value.status == 507


@pytest.mark.parametrize("bad", ["../operands/x", "op_..", "op_a/b", "", "op_\x00"])
def test_ids_that_are_not_names_are_unknown_not_paths(tmp_path, bad):
    first, _, _ = two_workers(tmp_path)
    with pytest.raises(ApiError) as error:
        first.get(bad)
    assert error.value.status == 404


def test_untuned_counts_are_summed_over_workers(tmp_path):
    one, two = (UntunedShapes(shared_dir=tmp_path, worker=name) for name in ("1", "2"))
    for _ in range(3):
        one.add(100, 200, 300, "col", "f32")
    two.add(100, 200, 300, "col", "f32")
    two.add(8, 8, 8, "row", "f16")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(list(tmp_path.glob("*.json"))) < 2:
        time.sleep(0.05)  # each publishes within PUBLISH_DELAY_S of its first new count
    assert one.top() == two.top() == [
        {"m": 100, "n": 200, "k": 300, "b_layout": "col", "acc": "f32", "requests": 4},
        {"m": 8, "n": 8, "k": 8, "b_layout": "row", "acc": "f16", "requests": 1}]
    assert two.grid("f32", "col") == "100_200_300\n"


def test_health_says_ready_only_when_every_worker_is(tmp_path):
    from service.workers import Readiness

    first, second = Readiness(tmp_path, 2), Readiness(tmp_path, 2)
    assert first.others_waiting() == 2
    first.mark(True)  # both objects live in this process: one marker (this pid) counts once
    assert second.others_waiting() == 1
    (tmp_path / "ready" / "999999999").touch()  # a worker that died without unmarking: not counted
    assert first.others_waiting() == 1
    first.mark(False)
    assert first.others_waiting() == 2
    assert Readiness(None, 4).others_waiting() == 0  # one process, no shared folder: nothing to wait for


def metric(text: str, name: str, **labels) -> float:
    for line in text.splitlines():
        head, _, value = line.rpartition(" ")
        if head == name or (head.startswith(name + "{") and all(f'{k}="{v}"' in head for k, v in labels.items())):
            return float(value)
    raise AssertionError(f"no {name} {labels} in /metrics")


def test_two_worker_processes_share_operands_and_metrics(tmp_path, rng):
    from test_server import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HGEMM_HOST": "127.0.0.1", "HGEMM_PORT": str(port), "HGEMM_BACKEND": "cpu",
           "HGEMM_API_KEYS": "", "HGEMM_WORKERS": "2", "HGEMM_SHARED_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen([sys.executable, "-m", "service"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        wait_ready(process, url)
        k, n, m = 64, 48, 5
        w = fp16(rng, n, k)
        r = httpx.post(url + "/v1/operands", params={"k": k, "n": n, "b_layout": "col", "name": "w"},
                       content=w.tobytes(), headers={"content-type": "application/octet-stream"})
        assert r.status_code == 201, r.text
        op = r.json()["id"]
        requests = 40
        for _ in range(requests):  # a fresh connection each: the kernel hands them to either worker
            a = fp16(rng, m, k)
            r = httpx.post(url + "/v1/hgemm", params={"m": m, "operand": op}, content=a.tobytes(),
                           headers={"content-type": "application/octet-stream", "connection": "close"})
            assert r.status_code == 200, r.text
            assert_close(np.frombuffer(r.content, dtype="<f2").reshape(m, n), reference(a, w, "col"))
        pids = {p.stem.rsplit("_", 1)[1] for p in (tmp_path / "metrics").glob("counter_*.db")}
        assert len(pids) == 2, pids  # both workers counted requests
        text = httpx.get(url + "/metrics").text
        assert metric(text, "hgemm_requests_total", endpoint="/v1/hgemm", status="200") == requests
        assert metric(text, "hgemm_ready") == 1.0 and metric(text, "hgemm_workers") == 2.0
        listing = httpx.get(url + "/v1/operands", headers={"connection": "close"}).json()
        assert [o["id"] for o in listing["operands"]] == [op]

        assert httpx.delete(f"{url}/v1/operands/{op}", headers={"connection": "close"}).status_code == 200
        for _ in range(10):  # gone on every worker
            r = httpx.post(url + "/v1/hgemm", params={"m": m, "operand": op}, content=fp16(rng, m, k).tobytes(),
                           headers={"content-type": "application/octet-stream", "connection": "close"})
            assert r.status_code == 404, r.text

        # a worker killed outright: uvicorn starts another, and the dead one's live gauges stop counting
        victim = int(sorted(pids)[0])
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                text = httpx.get(url + "/metrics", headers={"connection": "close"}, timeout=5).text
                live = {int(p.stem.rsplit("_", 1)[1]) for p in (tmp_path / "metrics").glob("gauge_livesum_*.db")}
                if victim not in live and metric(text, "hgemm_workers") == 2.0 and len(live) == 2:
                    break
            except (httpx.TransportError, AssertionError):
                pass
            time.sleep(0.5)
        else:
            raise AssertionError(f"the killed worker {victim} was not replaced or still counts")
        deadline = time.monotonic() + 120  # the new worker loads its backend: ready is the minimum over workers
        while metric(httpx.get(url + "/metrics").text, "hgemm_ready") != 1.0:
            assert time.monotonic() < deadline, "the new worker never became ready"
            time.sleep(0.5)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    assert "Traceback" not in output, output
