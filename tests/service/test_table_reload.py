"""POST /v1/kernels/tables/reload: re-read tuned tables served from the next GEMM on, in every worker process; bad
tables refused with the old ones kept; the CPU backend says it has none."""
from __future__ import annotations

import json
import os
import threading

import pytest

from kernels.tuned_tables import dump_table, load_tables
from service.backends import CpuBackend
from service.jobs import Selection
from service.table_reload import TableReloads
from service_helpers import fp16, run, serving

META = {"arch": "sm90", "acc": "f32", "gpu": "test"}


def cublas_entry(m, n, k):
    return {"m": m, "n": n, "k": k, "b_layout": "row", "kernel": "cublaslt", "config": {"algo_index": 1}}


class TablesOnDisk(CpuBackend):
    """The CPU backend answering `select` from tuned tables it reads from a folder, as the GPU backend does from
    the committed ones + HGEMM_EXTRA_TABLES: real files, real validation."""

    def __init__(self, directory):
        super().__init__()
        self.directory, self.tables = directory, {}

    def select(self, m, n, k, b_layout, acc):
        table = self.tables.get(acc)
        entry = table.lookup(m, n, k, b_layout) if table else None
        return Selection(entry.kernel, None) if entry else Selection("cublas", "no_tuned_kernel")

    def reload_tables(self):
        tables = load_tables("sm90", self.directory)
        self.tables = tables
        return {acc: {"entries": len(t.entries)} for acc, t in tables.items()}


def test_a_reload_serves_new_tables_keeps_resident_operands_and_refuses_bad_ones(rng, tmp_path):
    async def scenario():
        async with serving(TablesOnDisk(tmp_path)) as (client, _):
            b = fp16(rng, 48, 96)
            operand = (await client.post("/v1/operands", json={"data": b.tolist()})).json()["id"]

            async def kernel_for(m, n, k):
                r = await client.post("/v1/hgemm", json={"a": {"data": fp16(rng, m, k).tolist()},
                                                         "operand": operand})
                assert r.status_code == 200, r.text
                return r.json()["kernel"], r.json()["fallback"]

            assert await kernel_for(64, 96, 48) == ("cublas", "no_tuned_kernel")
            dump_table(META, [cublas_entry(64, 96, 48)], tmp_path / "sm90_f32.json")
            r = await client.post("/v1/kernels/tables/reload")
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["tables"] == {"f32": {"entries": 1}} and body["generation"] == 1
            assert body["workers"] == {"serving": 1, "of": 1, "failed": []}
            assert await kernel_for(64, 96, 48) == ("cublaslt", None)   # the next GEMM, same resident operand
            assert await kernel_for(32, 96, 48) == ("cublas", "no_tuned_kernel")

            (tmp_path / "sm90_f32.json").write_text(json.dumps({"meta": META, "entries": [{"m": 64}]}))
            r = await client.post("/v1/kernels/tables/reload")
            assert r.status_code == 422 and "the old ones stay" in r.json()["detail"], r.text
            assert "sm90_f32.json" in r.json()["detail"]
            assert await kernel_for(64, 96, 48) == ("cublaslt", None)   # the old tables still serve
    run(scenario())


def test_the_reload_reaches_select_in_the_backend(tmp_path):
    backend = TablesOnDisk(tmp_path)
    assert backend.select(64, 96, 48, "row", "f32").fallback == "no_tuned_kernel"
    dump_table(META, [cublas_entry(64, 96, 48)], tmp_path / "sm90_f32.json")
    assert backend.reload_tables() == {"f32": {"entries": 1}}
    assert backend.select(64, 96, 48, "row", "f32") == Selection("cublaslt", None)


def test_the_cpu_backend_has_no_tables_to_reload():
    async def scenario():
        async with serving() as (client, _):
            r = await client.post("/v1/kernels/tables/reload")
            assert r.status_code == 409 and "serves no tuned tables" in r.json()["detail"]
    run(scenario())


# ---- several workers: the generation in the shared folder -------------------------------------------------------
class Worker:
    """One worker's TableReloads, under a pid that is alive (ours or our parent's), with a reload that counts."""

    def __init__(self, shared, pid, fail=False):
        self.reloads, self.fail = 0, fail
        self.table_reloads = TableReloads(self.reload, shared, workers=2, poll_s=0.02)
        self.table_reloads.worker = pid

    def reload(self):
        if self.fail:
            raise ValueError("sm90_f16.json: entries[3].kernel: not a variant")
        self.reloads += 1
        return {"f32": {"entries": self.reloads}}


@pytest.fixture
def workers(tmp_path):
    made = []

    def make(fail=False):
        worker = Worker(tmp_path, [os.getpid(), os.getppid()][len(made)], fail)
        worker.table_reloads.loading()
        worker.table_reloads.start()
        made.append(worker)
        return worker
    yield make
    for worker in made:
        worker.table_reloads.stop()


def test_every_worker_follows_a_reload_made_on_one_of_them(workers):
    first, second = workers(), workers()
    body = first.table_reloads.reload_now()
    assert body["generation"] == 1 and body["workers"] == {"serving": 2, "of": 2, "failed": []}
    assert (first.reloads, second.reloads) == (1, 1)
    assert second.table_reloads.reload_now()["generation"] == 2 and first.reloads == 2


def test_a_worker_that_cannot_reload_is_reported_and_keeps_its_tables(workers):
    first, second = workers(), workers(fail=True)
    body = first.table_reloads.reload_now()
    assert body["workers"] == {"serving": 1, "of": 2, "failed": ["ValueError: sm90_f16.json: entries[3].kernel: "
                                                                   "not a variant"]}
    with pytest.raises(ValueError):           # on the worker the request reached: nothing bumped
        second.table_reloads.reload_now()
    assert first.table_reloads.reload_now()["generation"] == 2


def test_a_reload_while_a_worker_loads_is_followed_once_it_is_ready(tmp_path, workers):
    first = workers()
    late = Worker(tmp_path, os.getppid())
    late.table_reloads.loading()                      # reads its tables from disk ...
    first.table_reloads.reload_now()                  # ... while another worker reloads (no answer from `late` yet)
    late.table_reloads.start()
    try:
        late.table_reloads.poll()
        assert late.reloads == 1 and late.table_reloads.served == 1
    finally:
        late.table_reloads.stop()


def test_concurrent_reloads_get_distinct_generations(workers):
    first, second = workers(), workers()
    generations = []
    threads = [threading.Thread(target=lambda w=w: generations.append(w.table_reloads.reload_now()["generation"]))
               for w in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(generations) == [1, 2]
