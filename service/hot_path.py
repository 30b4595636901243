"""The binary `POST /v1/hgemm` as a raw ASGI handler in front of FastAPI: the request the load tests send thousands of
times a second skips routing, dependency solving, the Request/Response objects and six middleware layers, each of which
costs the one event loop tens of microseconds per request. Same API and semantics as the FastAPI route (which still
documents it in /openapi.json and serves it when this path declines): bearer auth, the same limits, errors, headers
and metrics. Every other request (JSON, other routes, other methods) goes through FastAPI unchanged."""
from __future__ import annotations

import logging
import time
from urllib.parse import parse_qsl

import numpy as np
import orjson
from fastapi import FastAPI
from starlette.requests import ClientDisconnect

from . import codec
from .auth import authorized, send_unauthorized
from .errors import ApiError
from .handling import read_body, require_ready, submit
from .state import ServiceState

log = logging.getLogger(__name__)

PATH = "/v1/hgemm"
BINARY = b"application/octet-stream"
BINARY_HEADERS = [(b"content-type", BINARY)]
ERROR_HEADERS = [(b"content-type", b"application/json")]


def content_type(headers) -> bytes:
    for name, value in headers:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower()
    return b""


class HgemmApp(FastAPI):
    """FastAPI, with binary `POST /v1/hgemm` answered by `binary_hgemm` before FastAPI's own stack."""

    binary_hgemm: BinaryHgemm | None = None

    async def __call__(self, scope, receive, send) -> None:
        if (self.binary_hgemm is not None and scope["type"] == "http" and scope["path"] == PATH
                and scope["method"] == "POST" and content_type(scope["headers"]) == BINARY):
            return await self.binary_hgemm(scope, receive, send)
        await super().__call__(scope, receive, send)


class BinaryHgemm:
    def __init__(self, state: ServiceState):
        self.state = state
        self.settings = state.settings
        self.metrics = state.metrics
        self.keys = [key.encode() for key in state.settings.api_key_list]

    async def __call__(self, scope, receive, send) -> None:
        started = time.perf_counter()
        metrics = self.metrics
        metrics.inflight.inc()
        status = 500  # what the metrics say when no answer was sent (the client went away, a bug)
        try:
            status = await self._serve(scope, receive, send)
        finally:
            metrics.inflight.dec()
            metrics.request_done(PATH, "POST", status, time.perf_counter() - started)

    async def _serve(self, scope, receive, send) -> int:
        headers = scope["headers"]
        if not authorized(self.keys, headers):
            await send_unauthorized(self.metrics, send)
            return 401
        try:
            body, headers_out = await self._compute(scope, receive, headers)
        except ClientDisconnect:
            return 500  # nobody to answer
        except ApiError as error:
            if error.reason:
                self.metrics.child(self.metrics.rejected, error.reason).inc()
            content = orjson.dumps({"detail": error.message})
            await send({"type": "http.response.start", "status": error.status, "headers": [
                *ERROR_HEADERS, (b"content-length", b"%d" % len(content)),
                *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in error.headers.items())]})
            await send({"type": "http.response.body", "body": content})
            return error.status
        except Exception:  # a bug: answer as FastAPI's ServerErrorMiddleware does, and let uvicorn log it
            await send({"type": "http.response.start", "status": 500, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"21")]})
            await send({"type": "http.response.body", "body": b"Internal Server Error"})
            raise
        await send({"type": "http.response.start", "status": 200, "headers": headers_out})
        await send({"type": "http.response.body", "body": body})
        return 200

    async def _compute(self, scope, receive, headers) -> tuple[memoryview, list]:
        state, settings = self.state, self.settings
        require_ready(state)
        declared = None
        x_headers = {}
        for name, value in headers:  # one pass (uvicorn lower-cases header names)
            if name[:2].lower() == b"x-":
                x_headers[name.decode("latin-1").lower()] = value.decode("latin-1")
            elif name == b"content-length":
                declared = value
        with state.batcher.arriving():  # a gathering batch waits for this request (batcher.py)
            query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
            params = codec.binary_params(query, x_headers)
            plan = codec.binary_plan(params, state.registry, settings.max_elements)
            body = await read_body(declared, receive, settings.max_body_bytes, plan.body_bytes, plan.describe())
            job = codec.job_from_binary(body, plan, params.acc)
        result = await submit(state, job)
        c = np.ascontiguousarray(result.c)
        # C's bytes go to the socket as they are: a flat memoryview, no bytes() copy
        headers_out = [*BINARY_HEADERS, (b"content-length", b"%d" % c.nbytes),
                       *((name.lower().encode("latin-1"), value.encode("latin-1"))
                         for name, value in codec.binary_headers(result, params.acc).items())]
        return memoryview(c).cast("B"), headers_out
