"""POST /v1/hgemm on the CPU backend: both encodings x both layouts x both accumulators against numpy float64, and
the provenance every answer carries."""
import base64

import numpy as np
import pytest

from service_helpers import assert_close, binary_headers, fp16, reference, run, serving

SHAPES = [(3, 5, 7), (64, 96, 48), (1, 1, 1), (17, 33, 129)]  # (m, n, k): tiny, aligned, degenerate, unaligned


def b_of(rng, k, n, layout):
    return fp16(rng, k, n) if layout == "row" else fp16(rng, n, k)


@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("acc", ["f32", "f16"])
def test_json_lists_and_base64_and_binary_match_float64(rng, layout, acc):
    async def scenario():
        async with serving() as (client, _):
            for m, n, k in SHAPES:
                a, b = fp16(rng, m, k), b_of(rng, k, n, layout)
                ref = reference(a, b, layout)

                r = await client.post("/v1/hgemm", json={"a": {"data": a.tolist()}, "b": {"data": b.tolist()},
                                                         "b_layout": layout, "acc": acc})
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["shape"] == [m, n] and body["dtype"] == "float16"
                assert_close(np.array(body["data"], dtype=np.float16), ref, acc)

                r = await client.post("/v1/hgemm", json={
                    "a": {"shape": [m, k], "base64": base64.b64encode(a.tobytes()).decode()},
                    "b": {"shape": list(b.shape), "base64": base64.b64encode(b.tobytes()).decode()},
                    "b_layout": layout, "acc": acc})
                assert r.status_code == 200, r.text
                body = r.json()
                c = np.frombuffer(base64.b64decode(body["base64"]), dtype="<f2").reshape(body["shape"])
                assert_close(c, ref, acc)

                r = await client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(),
                                      headers=binary_headers(m=m, n=n, k=k, b_layout=layout, acc=acc))
                assert r.status_code == 200, r.text
                assert (int(r.headers["x-m"]), int(r.headers["x-n"])) == (m, n)
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(m, n), ref, acc)

                query = f"?m={m}&n={n}&k={k}&b_layout={layout}&acc={acc}"  # query parameters instead of headers
                r = await client.post("/v1/hgemm" + query, content=a.tobytes() + b.tobytes(),
                                      headers={"content-type": "application/octet-stream"})
                assert r.status_code == 200, r.text
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(m, n), ref, acc)
    run(scenario())


def test_every_answer_says_which_kernel_ran_and_why_it_fell_back(rng):
    async def scenario():
        async with serving() as (client, _):
            a, b = fp16(rng, 4, 8), fp16(rng, 8, 2)
            r = await client.post("/v1/hgemm", json={"a": {"data": a.tolist()}, "b": {"data": b.tolist()},
                                                     "acc": "fp16"})
            body = r.json()
            assert (body["kernel"], body["fallback"], body["backend"]) == ("cpu_matmul", "cpu_backend", "cpu")
            assert (body["acc"], body["acc_computed"]) == ("f16", "f32")  # the CPU path accumulates in fp32
            assert r.headers["x-kernel"] == "cpu_matmul" and r.headers["x-fallback"] == "cpu_backend"
            r = await client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(), headers=binary_headers(m=4, n=2, k=8))
            assert (r.headers["x-kernel"], r.headers["x-fallback"], r.headers["x-backend"]) == \
                ("cpu_matmul", "cpu_backend", "cpu")
            assert r.headers["x-acc"] == "f32" and r.headers["x-batch-size"] == "1"
    run(scenario())


def test_response_encoding_can_differ_from_the_request(rng):
    async def scenario():
        async with serving() as (client, _):
            a, b = fp16(rng, 2, 3), fp16(rng, 3, 4)
            r = await client.post("/v1/hgemm", json={"a": {"data": a.tolist()}, "b": {"data": b.tolist()},
                                                     "encoding": "base64"})
            c = np.frombuffer(base64.b64decode(r.json()["base64"]), dtype="<f2").reshape(2, 4)
            assert_close(c, reference(a, b, "row"))
    run(scenario())


def test_zero_one_matrices_give_exact_counts(rng):
    """0/1 inputs make every product an exact small integer: catches transposes and off-by-one slicing."""
    async def scenario():
        async with serving() as (client, _):
            a = rng.integers(0, 2, (9, 31)).astype("<f2")
            b = rng.integers(0, 2, (31, 5)).astype("<f2")
            r = await client.post("/v1/hgemm", content=a.tobytes() + np.ascontiguousarray(b.T).tobytes(),
                                  headers=binary_headers(m=9, n=5, k=31, b_layout="col"))
            c = np.frombuffer(r.content, dtype="<f2").reshape(9, 5)
            assert np.array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype("<f2"))
    run(scenario())


def test_kernels_health_and_openapi_endpoints():
    async def scenario():
        async with serving() as (client, _):
            info = (await client.get("/v1/kernels")).json()
            assert info["backend"] == "cpu" and info["ready"] is True
            assert "cpu_backend" in info["fallback_reasons"]
            assert (await client.get("/health/live")).json() == {"status": "live"}
            assert (await client.get("/health/ready")).json()["status"] == "ready"
            spec = (await client.get("/openapi.json")).json()
            body = spec["paths"]["/v1/hgemm"]["post"]["requestBody"]["content"]
            assert set(body) == {"application/json", "application/octet-stream"}
            assert "HgemmRequest" in spec["components"]["schemas"]
            assert (await client.get("/docs")).status_code == 200
    run(scenario())


def test_large_json_bodies_are_decoded_off_the_event_loop_and_still_right(rng):
    """Over 256 KiB of JSON takes the worker-thread path for decoding and encoding."""
    async def scenario():
        async with serving() as (client, _):
            a, b = fp16(rng, 256, 512), fp16(rng, 512, 64)
            r = await client.post("/v1/hgemm", json={
                "a": {"shape": [256, 512], "base64": base64.b64encode(a.tobytes()).decode()},
                "b": {"shape": [512, 64], "base64": base64.b64encode(b.tobytes()).decode()}, "encoding": "list"})
            assert len(r.request.content) > 256 * 1024
            assert r.status_code == 200, r.text
            assert_close(np.array(r.json()["data"], dtype=np.float16), reference(a, b, "row"))
    run(scenario())


def test_not_ready_when_the_backend_cannot_load():
    """HGEMM_BACKEND=gpu on a machine without CUDA: alive, never ready, and GEMM requests get 503 with the reason."""
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")

    async def scenario():
        import asyncio

        import httpx

        from service import Settings, create_app
        app = create_app(Settings(backend="gpu"))
        async with app.router.lifespan_context(app):
            await asyncio.wait_for(app.state.hgemm._loader, 30)
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://hgemm") as client:
                assert (await client.get("/health/live")).status_code == 200
                r = await client.get("/health/ready")
                assert r.status_code == 503 and "no CUDA device" in r.json()["reason"]
                r = await client.post("/v1/hgemm", json={"a": {"data": [[1.0]]}, "b": {"data": [[1.0]]}})
                assert r.status_code == 503 and r.headers["retry-after"] == "1" and "not ready" in r.json()["detail"]
                assert "hgemm_ready 0.0" in (await client.get("/metrics")).text
    run(scenario())


def test_long_lived_objects_are_frozen_out_of_the_garbage_collector_once_ready():
    """A full collection over the ~200k objects torch and the backend leave paused the server ~200 ms under load."""
    import gc

    async def scenario():
        gc.unfreeze()
        assert gc.get_freeze_count() == 0
        async with serving():
            assert gc.get_freeze_count() > 1000
        gc.unfreeze()
    run(scenario())


def test_kernels_lists_the_extra_tables_too(tmp_path, monkeypatch):
    from kernels.tuned_tables import dump_table
    dump_table({"arch": "sm90", "acc": "f16", "gpu": "test"},
               [{"m": 40, "n": 136, "k": 72, "b_layout": "col", "kernel": "cublas"}], tmp_path / "sm90_f16.json")
    monkeypatch.setenv("HGEMM_EXTRA_TABLES", str(tmp_path))

    async def scenario():
        async with serving() as (client, _):
            tables = (await client.get("/v1/kernels")).json()["tables"]
            extra = [t for t in tables if t.get("extra")]
            assert [(t["file"], t["directory"], t["entries"]) for t in extra] == [("sm90_f16.json", str(tmp_path), 1)]
            assert extra[0]["shapes"] == [{"m": 40, "n": 136, "k": 72, "b_layout": "col", "kernel": "cublas"}]
            committed = [t for t in tables if not t.get("extra") and "gpu_overlay" not in t]
            assert {t["file"] for t in committed} == {"sm90_f32.json", "sm90_f16.json"}
            # the H100's overlay is listed, and does not apply on this (CPU) backend
            overlays = [t for t in tables if "gpu_overlay" in t]
            assert ("sm90_f32.json", "nvidia-h100-80gb-hbm3", False) in {
                (t["file"], t["gpu_overlay"], t["applies"]) for t in overlays}
            assert all(t["meta"]["gpu"] != "NVIDIA H200" and t["entries"] > 0 for t in overlays)
    run(scenario())


def test_kernels_says_which_gpu_overlay_applies():
    from service.app import _tuned_tables
    applies = {(t["gpu_overlay"], t["file"]): t["applies"] for t in _tuned_tables("NVIDIA H100 80GB HBM3")
               if "gpu_overlay" in t}
    assert applies[("nvidia-h100-80gb-hbm3", "sm90_f32.json")] is True
    assert not any(t.get("applies") for t in _tuned_tables("NVIDIA H200") + _tuned_tables(""))
