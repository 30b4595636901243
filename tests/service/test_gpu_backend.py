"""The GPU backend on a real GPU (skipped elsewhere): streams, pinned staging, fusion and the dispatcher (or cuBLAS via
torch while the kernel library is absent), against float64; then the app end to end on it."""
import asyncio

import numpy as np
import pytest

from service.backends import GpuBackend
from service.jobs import Job
from service.metrics import fallback_reasons
from service_helpers import assert_close, binary_headers, fp16, reference, run, serving

pytestmark = pytest.mark.gpu


def make_jobs(rng, backend):
    """Inline jobs of both layouts and accumulators (unaligned shapes too), plus 3 jobs on one resident operand."""
    jobs, refs = [], []
    for m, n, k, layout, acc in [(64, 4096, 64, "col", "f32"), (33, 17, 40, "row", "f32"), (128, 256, 512, "row", "f16"),
                                 (1, 8, 8, "col", "f16"), (7, 5, 3, "row", "f32")]:
        a = fp16(rng, m, k)
        b = fp16(rng, k, n) if layout == "row" else fp16(rng, n, k)
        jobs.append(Job(a, b, layout, acc))
        refs.append(reference(a, b, layout))
    w = fp16(rng, 96, 64)  # col: N=96, K=64
    resident = backend.resident(w)
    for m in (5, 64, 3):
        a = fp16(rng, m, 64)
        jobs.append(Job(a, resident, "col", "f32", operand_id="op_w"))
        refs.append(reference(a, w, "col"))
    return jobs, refs


def test_gpu_backend_batches_match_float64_and_fuse(rng):
    backend = GpuBackend(num_streams=3)  # fewer streams than groups: slots carry several groups
    backend.load()
    jobs, refs = make_jobs(rng, backend)
    backend.run_batch(jobs)  # sizes the staging buffers
    for arena in backend.inputs + backend.outputs:
        arena.buffer.fill_(0xFF)  # poison: fp16 NaN everywhere a stale value could leak from
    results = backend.run_batch(jobs)
    reasons = set(fallback_reasons())
    for job, result, ref in zip(jobs, results, refs):
        assert not isinstance(result, Exception), result
        assert_close(result.c, ref, job.acc)
        assert result.backend == "gpu" and result.batch_size == len(jobs)
        assert result.selection.fallback is None or result.selection.fallback in reasons
    assert [r.fused for r in results[-3:]] == [3, 3, 3]
    assert all(r.fused == 1 for r in results[:-3])
    from service.backends import PHASES
    assert set(backend.phases) == set(PHASES) and all(v >= 0 for v in backend.phases.values())
    assert backend.phases["launch"] > 0 and backend.phases["stage_in"] > 0


def test_gpu_backend_results_do_not_alias_the_staging_buffers(rng):
    backend = GpuBackend(num_streams=2)
    backend.load()
    a, b = fp16(rng, 16, 32), fp16(rng, 32, 8)
    first = backend.run_batch([Job(a, b, "row", "f32")])[0]
    backend.run_batch([Job(fp16(rng, 16, 32), fp16(rng, 32, 8), "row", "f32")])  # reuses the same pinned slices
    assert_close(first.c, reference(a, b, "row"))


def test_app_on_the_gpu_backend(rng):
    async def scenario():
        async with serving(backend="gpu", max_batch_size=8, max_queue_delay_us=2000) as (client, app):
            info = (await client.get("/v1/kernels")).json()
            assert info["backend"] == "gpu"
            w = fp16(rng, 4096, 64)  # the load-test operand: N=4096, K=64, b_layout=col
            op = (await client.post("/v1/operands", content=w.tobytes(),
                                    headers=binary_headers(k=64, n=4096, b_layout="col"))).json()["id"]
            parts = [fp16(rng, 64, 64) for _ in range(16)]
            answers = await asyncio.gather(*(client.post("/v1/hgemm", content=a.tobytes(),
                                                         headers=binary_headers(m=64, operand=op)) for a in parts))
            for a, r in zip(parts, answers):
                assert r.status_code == 200, r.text
                assert r.headers["x-backend"] == "gpu" and r.headers["x-kernel"] != "cpu_matmul"
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(64, 4096), reference(a, w, "col"))
            text = (await client.get("/metrics")).text
            assert "hgemm_gpu_memory_total_bytes{" in text and "hgemm_gpu_utilization_ratio{" in text
            assert 'hgemm_fastpath_calls_total{result="miss"}' in text and "hgemm_fastpath_entries " in text
    run(scenario())


def test_gpu_backend_reloads_tables_from_hgemm_extra_tables(rng, tmp_path, monkeypatch):
    """A deployment's own table (here one cuBLASLt entry for a shape the grid lacks) served after a reload; the
    GEMM on it still matches float64."""
    from kernels.tuned_tables import dump_table

    backend = GpuBackend(num_streams=2)
    backend.load()
    if backend.dispatcher is None:
        pytest.skip(f"kernel library unavailable: {backend.dispatcher_error}")
    m, n, k = 40, 136, 72
    assert backend.select(m, n, k, "col", "f32").fallback == "no_tuned_kernel"
    dump_table({"arch": backend.dispatcher.arch, "acc": "f32", "gpu": "test"},
               [{"m": m, "n": n, "k": k, "b_layout": "col", "kernel": "cublaslt", "config": {"algo_index": 0}}],
               tmp_path / f"{backend.dispatcher.arch}_f32.json")
    monkeypatch.setenv("HGEMM_EXTRA_TABLES", str(tmp_path))
    summary = backend.reload_tables()
    assert str(tmp_path) in summary["f32"]["source"]
    selection = backend.select(m, n, k, "col", "f32")
    assert (selection.kernel, selection.fallback) == ("cublaslt", None)
    a, b = fp16(rng, m, k), fp16(rng, n, k)
    (result,) = backend.run_batch([Job(a, b, "col", "f32")])
    assert result.selection.kernel == "cublaslt"
    assert_close(result.c, reference(a, b, "col"), "f32")
    monkeypatch.delenv("HGEMM_EXTRA_TABLES")
    backend.reload_tables()
    assert backend.select(m, n, k, "col", "f32").fallback == "no_tuned_kernel"
