"""The naive baseline speaks the binary subset of the service's API and computes the right product (CPU here; the
same code runs torch.matmul on the GPU for the H200 comparison)."""
from __future__ import annotations

import asyncio

import httpx
import numpy as np
import pytest

from loadtest.naive_server import create_app

BINARY = {"Content-Type": "application/octet-stream"}


class SyncClient:
    """httpx's ASGI client driven from plain tests, one event loop for the module (starlette's TestClient is
    deprecated with httpx)."""

    def __init__(self, runner: asyncio.Runner, http: httpx.AsyncClient):
        self._runner, self._http = runner, http

    def __getattr__(self, method: str):
        return lambda *args, **kwargs: self._runner.run(getattr(self._http, method)(*args, **kwargs))


@pytest.fixture(scope="module")
def client():
    app = create_app("cpu")
    with asyncio.Runner() as runner:
        lifespan = app.router.lifespan_context(app)
        runner.run(lifespan.__aenter__())
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://naive")
        try:
            yield SyncClient(runner, http)
        finally:
            runner.run(http.aclose())
            runner.run(lifespan.__aexit__(None, None, None))


def reference(a: np.ndarray, b: np.ndarray, layout: str) -> np.ndarray:
    b64 = b.astype(np.float64)
    return a.astype(np.float64) @ (b64.T if layout == "col" else b64)


def relative_error(c: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("layout", ["row", "col"])
def test_inline_b_matches_float64(client, layout):
    rng = np.random.default_rng(11)
    m, n, k = 5, 24, 40
    a = rng.uniform(-1, 1, (m, k)).astype("<f2")
    b = rng.uniform(-1, 1, (n, k) if layout == "col" else (k, n)).astype("<f2")
    response = client.post("/v1/hgemm", params={"m": m, "n": n, "k": k, "b_layout": layout},
                           content=a.tobytes() + b.tobytes(), headers=BINARY)
    assert response.status_code == 200, response.text
    c = np.frombuffer(response.content, dtype="<f2").reshape(m, n)
    assert relative_error(c, reference(a, b, layout)) < 1e-3


def test_resident_operand_register_use_delete(client):
    rng = np.random.default_rng(12)
    m, n, k = 3, 16, 32
    w = rng.uniform(-1, 1, (n, k)).astype("<f2")
    created = client.post("/v1/operands", params={"k": k, "n": n, "b_layout": "col"}, content=w.tobytes(),
                          headers=BINARY)
    assert created.status_code == 201
    operand = created.json()["id"]
    a = rng.uniform(-1, 1, (m, k)).astype("<f2")
    response = client.post("/v1/hgemm", headers={**BINARY, "X-M": str(m), "X-Operand": operand}, content=a.tobytes())
    assert response.status_code == 200, response.text
    c = np.frombuffer(response.content, dtype="<f2").reshape(m, n)
    assert relative_error(c, reference(a, w, "col")) < 1e-3
    assert client.delete(f"/v1/operands/{operand}").status_code == 200
    assert client.post("/v1/hgemm", params={"m": m, "operand": operand}, content=a.tobytes(),
                       headers=BINARY).status_code == 404


def test_bad_requests_are_4xx(client):
    assert client.post("/v1/hgemm", params={"m": 2, "n": 2, "k": 2}, content=b"\0" * 7, headers=BINARY).status_code == 400
    assert client.post("/v1/hgemm", params={"m": 0, "n": 2, "k": 2}, content=b"", headers=BINARY).status_code == 422
    assert client.get("/health/ready").json()["status"] == "ready"


@pytest.mark.parametrize("layout", ["row", "col"])
def test_json_requests_of_the_small_json_scenario_match_float64(client, layout):
    from loadtest._payloads import small_json_body

    body = small_json_body()
    body["b_layout"] = layout
    a, b = np.array(body["a"]["data"], dtype="<f2"), np.array(body["b"]["data"], dtype="<f2")
    response = client.post("/v1/hgemm", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["shape"] == [8, 8]
    c = np.array(response.json()["data"], dtype="<f2")
    assert relative_error(c, reference(a, b, layout)) < 1e-3


def test_bad_json_requests_are_4xx(client):
    assert client.post("/v1/hgemm", content=b"{not json", headers={"Content-Type": "application/json"}
                       ).status_code == 400
    assert client.post("/v1/hgemm", json={"a": {"data": [[1.0]]}}).status_code == 422
    assert client.post("/v1/hgemm", json={"a": {"data": [[1.0, 2.0]]}, "b": {"data": [[1.0, 2.0]]}}).status_code == 422
    assert client.post("/v1/hgemm", json={"a": {"data": [[1.0], [1.0, 2.0]]}, "b": {"data": [[1.0]]}}
                       ).status_code == 422
