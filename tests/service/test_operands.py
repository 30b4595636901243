"""Resident operands: register (JSON and binary), list, use (both encodings, both layouts), fuse, delete, budget."""
import asyncio
import base64

import numpy as np
import pytest

from service_helpers import assert_close, binary_headers, fp16, reference, run, serving


@pytest.mark.parametrize("layout", ["row", "col"])
def test_register_list_use_delete(rng, layout):
    async def scenario():
        async with serving() as (client, app):
            k, n = 48, 40
            w = fp16(rng, k, n) if layout == "row" else fp16(rng, n, k)
            r = await client.post("/v1/operands", json={"shape": list(w.shape), "b_layout": layout, "name": "w1",
                                                        "base64": base64.b64encode(w.tobytes()).decode()})
            assert r.status_code == 201, r.text
            info = r.json()
            assert (info["k"], info["n"], info["b_layout"], info["bytes"], info["name"]) == (k, n, layout, w.nbytes, "w1")
            op = info["id"]

            r = await client.post("/v1/operands", content=w.tobytes(),
                                  headers=binary_headers(k=k, n=n, b_layout=layout, name="w2"))
            assert r.status_code == 201, r.text
            op2 = r.json()["id"]
            listing = (await client.get("/v1/operands")).json()
            assert [o["id"] for o in listing["operands"]] == [op, op2]
            assert listing["used_bytes"] == 2 * w.nbytes
            assert (await client.get(f"/v1/operands/{op2}")).json()["name"] == "w2"

            a = fp16(rng, 7, k)
            r = await client.post("/v1/hgemm", json={"a": {"data": a.tolist()}, "operand": op})
            assert r.status_code == 200, r.text
            assert_close(np.array(r.json()["data"], dtype=np.float16), reference(a, w, layout))
            r = await client.post("/v1/hgemm", content=a.tobytes(), headers=binary_headers(m=7, operand=op2))
            assert r.status_code == 200, r.text
            assert_close(np.frombuffer(r.content, dtype="<f2").reshape(7, n), reference(a, w, layout))

            other = "col" if layout == "row" else "row"
            r = await client.post("/v1/hgemm", content=a.tobytes(), headers=binary_headers(m=7, operand=op, b_layout=other))
            assert r.status_code == 400 and "registered with" in r.json()["detail"]
            r = await client.post("/v1/hgemm", content=a.tobytes(), headers=binary_headers(m=7, operand=op, k=k + 1))
            assert r.status_code == 400 and f"has k={k}" in r.json()["detail"]
            r = await client.post("/v1/hgemm", json={"a": {"data": fp16(rng, 2, k + 1).tolist()}, "operand": op})
            assert r.status_code == 400 and "shapes do not match" in r.json()["detail"]

            assert (await client.delete(f"/v1/operands/{op}")).json()["id"] == op
            assert (await client.delete(f"/v1/operands/{op}")).status_code == 404
            r = await client.post("/v1/hgemm", content=a.tobytes(), headers=binary_headers(m=7, operand=op))
            assert r.status_code == 404 and op in r.json()["detail"]
            assert (await client.get(f"/v1/operands/{op}")).status_code == 404
            assert [o["id"] for o in (await client.get("/v1/operands")).json()["operands"]] == [op2]
    run(scenario())


def test_requests_sharing_an_operand_are_fused_into_one_gemm(rng):
    async def scenario():
        async with serving(max_batch_size=8, max_queue_delay_us=10_000_000) as (client, _):
            w = fp16(rng, 64, 32)  # col: N=64, K=32
            op = (await client.post("/v1/operands", content=w.tobytes(),
                                    headers=binary_headers(k=32, n=64, b_layout="col"))).json()["id"]
            parts = [fp16(rng, 1 + 3 * i, 32) for i in range(8)]  # different M each: catches mis-sliced stacking
            answers = await asyncio.gather(*(client.post("/v1/hgemm", content=a.tobytes(),
                                                         headers=binary_headers(m=a.shape[0], operand=op))
                                             for a in parts))
            for a, r in zip(parts, answers):
                assert r.status_code == 200 and r.headers["x-fused"] == "8" and r.headers["x-batch-size"] == "8"
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(a.shape[0], 64), reference(a, w, "col"))
    run(scenario())


def test_budget_full_gives_507_and_frees_on_delete(rng):
    async def scenario():
        async with serving(operand_budget_bytes=3000) as (client, app):
            w = fp16(rng, 32, 32)  # 2048 bytes
            first = await client.post("/v1/operands", content=w.tobytes(), headers=binary_headers(k=32, n=32))
            assert first.status_code == 201
            r = await client.post("/v1/operands", content=w.tobytes(), headers=binary_headers(k=32, n=32))
            assert r.status_code == 507
            assert "does not fit" in r.json()["detail"] and "HGEMM_OPERAND_BUDGET_BYTES" in r.json()["detail"]
            r = await client.post("/v1/operands", json={"data": w.tolist()})
            assert r.status_code == 507
            await client.delete(f"/v1/operands/{first.json()['id']}")
            r = await client.post("/v1/operands", json={"data": w.tolist()})
            assert r.status_code == 201
    run(scenario())


def test_bad_operand_registrations_name_the_problem(rng):
    async def scenario():
        async with serving(max_elements=5000) as (client, _):
            w = fp16(rng, 8, 4)
            r = await client.post("/v1/operands", content=w.tobytes(), headers=binary_headers(k=8))
            assert r.status_code == 422 and "k and n are required" in r.json()["detail"]
            r = await client.post("/v1/operands", content=w.tobytes()[:-2], headers=binary_headers(k=8, n=4))
            assert r.status_code == 400 and "needs 64" in r.json()["detail"]
            r = await client.post("/v1/operands", content=b"", headers=binary_headers(k=100, n=100))
            assert r.status_code == 413 and "HGEMM_MAX_ELEMENTS" in r.json()["detail"]
            r = await client.post("/v1/operands", json={"data": w.tolist(), "b_layout": "diag"})
            assert r.status_code == 422 and "b_layout" in r.json()["detail"]
            r = await client.post("/v1/operands", json={"shape": [8, 4], "base64": "AAAA"})
            assert r.status_code == 400 and "decodes to 3 bytes" in r.json()["detail"]
            r = await client.post("/v1/operands", content=w.tobytes(), headers={"content-type": "image/png"})
            assert r.status_code == 415
            for name, status in (("x" * 129, 422), ("x" * 128, 201)):  # one limit for both encodings
                r = await client.post("/v1/operands", content=w.tobytes(), headers=binary_headers(k=8, n=4, name=name))
                assert r.status_code == status, r.text
                r = await client.post("/v1/operands", json={"data": w.tolist(), "name": name})
                assert r.status_code == status, r.text
            assert "at most 128" in (await client.post("/v1/operands", content=w.tobytes(), headers=binary_headers(
                k=8, n=4, name="y" * 200))).json()["detail"]
    run(scenario())
