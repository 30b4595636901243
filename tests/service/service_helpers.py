"""Helpers for the service tests (imported by name: tests/ is not a package): an app on the CPU backend driven in-process through httpx's ASGI transport (the
lifespan runs, so the batcher and warm-up are real), numpy float64 references, fp16 tolerances."""
from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager

import httpx
import numpy as np
from service import Settings, create_app
from service.backends import CpuBackend

TOLERANCE = {"f32": 2e-3, "f16": 2e-2}  # relative Frobenius error against float64


def wait_ready(process, url: str, seconds: float = 180) -> None:
    """Until a `python -m service` subprocess answers /health/ready with 200; fails if it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read()
        try:
            if httpx.get(url + "/health/ready", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("python -m service never became ready")


def run(coro):
    return asyncio.run(coro)


@asynccontextmanager
async def serving(backend_object=None, **overrides):
    """Yield (client, app) once the app reports ready. `backend_object` replaces the backend the settings would make;
    `backend="gpu"|"cpu"` (a setting) chooses it."""
    overrides.setdefault("backend", "cpu")
    app = create_app(Settings(**overrides), backend=backend_object)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hgemm", timeout=30) as client:
            for _ in range(600):
                if (await client.get("/health/ready")).status_code == 200:
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("service never became ready")
            yield client, app


def fp16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Random fp16 values in [-1, 1): never zeros, fresh per call."""
    return rng.uniform(-1, 1, shape).astype("<f2")


def reference(a: np.ndarray, b: np.ndarray, b_layout: str) -> np.ndarray:
    b64 = b.astype(np.float64)
    return a.astype(np.float64) @ (b64 if b_layout == "row" else b64.T)


def assert_close(c: np.ndarray, ref: np.ndarray, acc: str = "f32") -> None:
    assert c.shape == ref.shape
    assert np.isfinite(c).all()
    error = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert error <= TOLERANCE[acc], f"relative error {error:.3g} > {TOLERANCE[acc]}"


def binary_headers(**params) -> dict:
    headers = {"content-type": "application/octet-stream"}
    headers.update({f"X-{name.upper().replace('_', '-')}": str(value) for name, value in params.items()})
    return headers


class GatedCpuBackend(CpuBackend):
    """The real CPU backend, except that batches wait for `gate` (after warm-up): lets a test fill the queue or hold a
    request past its deadline deterministically. `entered` is set each time a batch reaches the gate."""

    def __init__(self):
        super().__init__(num_threads=2)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[int] = []
        self._warm = False

    def run_batch(self, jobs):
        if self._warm:
            self.entered.set()
            self.gate.wait(timeout=60)
        self.batches.append(len(jobs))
        return super().run_batch(jobs)

    def arm(self):
        """Start gating (call after ready, so the warm-up passes)."""
        self.batches.clear()
        self._warm = True


class ThreadedServer:
    """The app under a real uvicorn server on a loopback port, in a thread of this process (starts in well under a
    second, unlike a fresh interpreter importing torch)."""

    def __init__(self, **overrides):
        import socket

        import uvicorn

        overrides.setdefault("backend", "cpu")
        self.app = create_app(Settings(**overrides))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(1000):
            try:
                if httpx.get(self.url + "/health/ready", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            threading.Event().wait(0.01)
        raise AssertionError("threaded server never became ready")

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()
