"""The FastAPI app: `create_app(settings=None)`. Routes are thin: read the body within limits, decode (codec), submit
to the batcher, encode the answer with the kernel that ran and why it fell back, if it did."""
from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from importlib import util as importlib_util
from pathlib import Path

import numpy as np
import orjson
import pydantic
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from pydantic.json_schema import models_json_schema

from . import codec
from .backends import Backend
from .errors import ApiError, bad_request, invalid
from .handling import read_body, require_ready, submit
from .hot_path import BinaryHgemm, HgemmApp
from .auth import BearerAuthMiddleware
from .metrics import RequestMetricsMiddleware, fallback_reasons
from .schemas import NAME_MAX_CHARS, HgemmRequest, HgemmResponse, OperandCreate, OperandInfo, OperandList
from .settings import Settings
from .state import ServiceState
from .table_reload import TablesUnavailable

JSON = "application/json"
BINARY = "application/octet-stream"
OFF_LOOP_BYTES = 256 * 1024  # decode/encode larger JSON bodies on a thread so the event loop stays responsive
WIRE_MODELS = [(HgemmRequest, "validation"), (OperandCreate, "validation"), (HgemmResponse, "serialization")]


def _ref(model) -> dict:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _binary_parameters(names: dict[str, dict]) -> list[dict]:
    return [{"name": name, "in": "query", "required": False, "schema": schema,
             "description": f"or header X-{name.upper().replace('_', '-')}"} for name, schema in names.items()]


DIM = {"type": "integer", "minimum": 1}
HGEMM_BINARY_PARAMS = {"m": DIM, "n": DIM, "k": DIM, "b_layout": {"type": "string", "enum": ["row", "col"]},
                       "acc": {"type": "string", "enum": ["f32", "f16"]}, "operand": {"type": "string"},
                       "dtype": {"type": "string", "enum": ["float16"]}}
OPERAND_BINARY_PARAMS = {"k": DIM, "n": DIM, "b_layout": {"type": "string", "enum": ["row", "col"]},
                         "name": {"type": "string", "maxLength": NAME_MAX_CHARS},
                         "dtype": {"type": "string", "enum": ["float16"]}}


def _body(model) -> dict:
    return {"requestBody": {"required": True, "content": {
        JSON: {"schema": _ref(model)}, BINARY: {"schema": {"type": "string", "format": "binary"}}}}}


def create_app(settings: Settings | None = None, backend: Backend | None = None) -> HgemmApp:
    settings = settings or Settings()
    state = ServiceState(settings, backend)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await state.start()
        try:
            yield
        finally:
            await state.stop()

    app = HgemmApp(title="tuned HGEMM", version="0.1.0", lifespan=lifespan,
                  description="fp16 GEMM (C = A @ B or A @ Bᵀ) on tuned CUDA kernels, cuBLAS, or the CPU.")
    app.state.hgemm = state
    app.binary_hgemm = BinaryHgemm(state)  # binary POST /v1/hgemm: the raw ASGI hot path, ahead of FastAPI
    app.add_middleware(BearerAuthMiddleware, keys=settings.api_key_list, metrics=state.metrics)
    app.add_middleware(RequestMetricsMiddleware, metrics=state.metrics, routes=lambda: app.routes)  # outermost: it also counts the 401s
    _install_error_handlers(app, state)
    @app.post("/v1/hgemm", openapi_extra={**_body(HgemmRequest), "parameters": _binary_parameters(HGEMM_BINARY_PARAMS)},
             responses={200: {"description": "C, with the kernel that ran", "content": {
                 JSON: {"schema": _ref(HgemmResponse)}, BINARY: {"schema": {"type": "string", "format": "binary"}}}},
                 **_error_responses(400, 401, 404, 413, 415, 422, 503, 504)})
    async def hgemm(request: Request) -> Response:
        """C = A @ B. JSON: an HgemmRequest. Binary (application/octet-stream): A's bytes then B's (omitted with a
        resident operand), little-endian float16 row-major; m, n, k, b_layout, acc, operand in the query or X-* headers;
        the answer is C's raw bytes with X-M, X-N, X-Kernel, X-Fallback headers."""
        # The binary requests normally never get here: hot_path.BinaryHgemm answers them first. This branch is the
        # reference it is tested against (tests/service/test_hot_path.py), and serves when app.binary_hgemm is None.
        kind = _content_type(request)
        require_ready(state)
        if kind == BINARY:
            with state.batcher.arriving():  # a gathering batch waits for this request (batcher.py)
                params = codec.binary_params(request.query_params, _x_headers(request))
                plan = codec.binary_plan(params, state.registry, settings.max_elements)
                body = await _read_body(request, settings.max_body_bytes, plan.body_bytes, plan.describe())
                job = codec.job_from_binary(body, plan, params.acc)
            result = await submit(state, job)
            # a memoryview of C: starlette sends contiguous buffers as they are, without another copy
            return Response(memoryview(np.ascontiguousarray(result.c)), media_type=BINARY,
                            headers=codec.binary_headers(result, params.acc))
        with state.batcher.arriving():
            body = await _read_body(request, settings.max_body_bytes)
            large = len(body) > OFF_LOOP_BYTES
            parsed = await _maybe_off_loop(large, _parse, HgemmRequest, body)
            job, encoding = await _maybe_off_loop(large, codec.job_from_json, parsed, state.registry,
                                                  settings.max_elements)
        result = await submit(state, job)
        acc = codec.ACCUMULATORS[parsed.acc]
        content = await _maybe_off_loop(large, lambda: orjson.dumps(codec.result_to_json(result, acc, encoding),
                                                                    option=orjson.OPT_SERIALIZE_NUMPY))
        return Response(content, media_type=JSON, headers={"X-Kernel": result.selection.kernel,
                                                           "X-Fallback": result.selection.fallback or "none"})

    @app.post("/v1/operands", status_code=201, response_model=OperandInfo,
             openapi_extra={**_body(OperandCreate), "parameters": _binary_parameters(OPERAND_BINARY_PARAMS)},
             responses=_error_responses(400, 401, 413, 415, 422, 503, 507))
    async def register_operand(request: Request):
        """Keep a B resident (GPU memory on the GPU backend). JSON: an OperandCreate; binary: B's bytes with k, n,
        b_layout (row: K×N, col: N×K) and an optional name in the query or X-* headers. 507 when over budget."""
        kind = _content_type(request)
        require_ready(state)
        if kind == BINARY:
            params = codec.binary_params({k: v for k, v in request.query_params.items() if k != "m"},
                                         _x_headers(request))
            if params.k is None or params.n is None:
                raise invalid("k and n are required (query ?k=&n= or headers X-K, X-N)")
            layout = params.b_layout or "row"
            rows, cols = codec.b_shape(params.k, params.n, layout)
            codec.check_elements("b", rows, cols, settings.max_elements)
            state.registry.check_room(rows * cols * 2)
            body = await _read_body(request, settings.max_body_bytes, rows * cols * 2,
                                    f"float16 b {rows}x{cols} needs {rows * cols * 2}")
            b = np.frombuffer(body, dtype=codec.FP16).reshape(rows, cols)
            name = request.query_params.get("name") or _x_headers(request).get("x-name")
            if name is not None and len(name) > NAME_MAX_CHARS:
                raise invalid(f"name has {len(name)} characters: at most {NAME_MAX_CHARS}")
        else:
            body = await _read_body(request, settings.max_body_bytes)
            parsed = await _maybe_off_loop(len(body) > OFF_LOOP_BYTES, _parse, OperandCreate, body)
            b = await asyncio.to_thread(codec.matrix_from_json, parsed, "b", settings.max_elements)
            layout, name = parsed.b_layout, parsed.name
        k, n = (b.shape[0], b.shape[1]) if layout == "row" else (b.shape[1], b.shape[0])
        state.registry.check_room(b.nbytes)
        try:
            tensor = await asyncio.to_thread(state.backend.resident, b)
        except RuntimeError as error:  # e.g. CUDA out of memory
            raise ApiError(507, f"could not keep the operand resident: {error}", reason=None) from None
        # off the loop: with several workers this also writes B to the shared store
        operand = await asyncio.to_thread(state.registry.add, tensor, b.nbytes, layout, k, n, name, b)
        state.sync_operand_gauges()
        return operand.info()

    @app.get("/v1/operands", response_model=OperandList)
    async def list_operands():
        return {"operands": [op.info() for op in state.registry.list()], "used_bytes": state.registry.used_bytes,
                "budget_bytes": state.registry.budget_bytes}

    @app.get("/v1/operands/{operand_id}", response_model=OperandInfo, responses=_error_responses(401, 404))
    async def get_operand(operand_id: str):
        return state.registry.get(operand_id).info()

    @app.delete("/v1/operands/{operand_id}", response_model=OperandInfo, responses=_error_responses(401, 404))
    async def delete_operand(operand_id: str):
        """Forget a resident operand; requests already queued with it still complete."""
        info = state.registry.remove(operand_id).info()
        state.sync_operand_gauges()
        return info

    @app.get("/v1/kernels")
    async def kernels_info():
        """The backend, the device, and what the kernel library covers (tuned shapes, fallback policy)."""
        gpu = getattr(getattr(state.backend, "dispatcher", None), "gpu", "")   # whose overlay applies
        return {**state.backend.info(), "ready": state.ready, "tables": _tuned_tables(gpu),
                "fallback_policy": "tuned table (+ HGEMM_EXTRA_TABLES) -> predictor -> pad (N or K unaligned) -> "
                                   "nearest tuned shape (HGEMM_NEAREST, off by default) -> cuBLAS, fp32 accumulation "
                                   "for f16 (GPU); the CPU backend always reports kernel cpu_matmul, fallback "
                                   "cpu_backend",
                "fallback_reasons": list(fallback_reasons()),
                "limits": {"max_elements": settings.max_elements, "max_body_bytes": settings.max_body_bytes,
                           "max_batch_size": settings.max_batch_size,
                           "max_queue_delay_us": settings.max_queue_delay_us}}

    @app.get("/v1/kernels/untuned", responses=_error_responses(401, 422))
    async def untuned_shapes(request: Request):
        """GEMM shapes served by the cuBLAS fallback because no tuned table holds them, most requested first
        (`?acc=f32|f16&b_layout=row|col&limit=N`). `format=grid` (acc and b_layout required): the M_N_K lines that
        `python -m tuner.tune --grid` reads; serve the tables it writes with HGEMM_EXTRA_TABLES."""
        query = request.query_params
        unknown = set(query) - {"acc", "b_layout", "limit", "format"}
        if unknown:
            raise invalid(f"unknown query parameters {sorted(unknown)}; known: acc, b_layout, limit, format")
        acc, b_layout, fmt = query.get("acc"), query.get("b_layout"), query.get("format", "json")
        if acc not in (None, "f32", "f16") or b_layout not in (None, "row", "col") or fmt not in ("json", "grid"):
            raise invalid("acc must be f32 or f16, b_layout row or col, format json or grid")
        try:
            limit = int(query["limit"]) if "limit" in query else None
        except ValueError:
            limit = 0
        if limit is not None and limit < 1:
            raise invalid("limit must be a positive integer")
        if fmt == "grid":
            if acc is None or b_layout is None:
                raise invalid("format=grid lists one tuning job's shapes: give acc and b_layout")
            return Response(state.untuned.grid(acc, b_layout, limit), media_type="text/plain")
        return state.untuned.report(acc, b_layout, limit)

    @app.post("/v1/kernels/tables/reload", responses=_error_responses(401, 409, 422, 503))
    async def reload_tables():
        """Re-read the tuned tables (the committed ones + HGEMM_EXTRA_TABLES) and serve them from the next GEMM on,
        in every worker process; resident operands and queued requests are kept. 422: a table does not validate
        (the old ones stay); 409: this backend serves no tuned tables (CPU)."""
        require_ready(state)
        try:
            return await asyncio.to_thread(state.table_reloads.reload_now)
        except TablesUnavailable as error:
            raise ApiError(409, f"tables not reloaded: {error}", reason=None) from None
        except ValueError as error:
            raise invalid(f"tables not reloaded, the old ones stay: {error}") from None

    @app.get("/health/live")
    async def live():
        return {"status": "live"}

    @app.get("/health/ready", responses=_error_responses(503))
    async def ready():
        ready, reason = state.health()
        if not ready:
            return JSONResponse({"status": "not ready", "reason": reason}, status_code=503,
                                headers={"Retry-After": "1"})
        return {"status": "ready", "backend": state.backend.name, "device": state.backend.device}

    @app.get("/metrics", include_in_schema=False)
    async def metrics():
        content, content_type = state.metrics.render()
        return Response(content, media_type=content_type)

    app.openapi = lambda: _openapi(app)
    return app


# ---------------------------------------------------------------- helpers

def _content_type(request: Request) -> str:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in (JSON, BINARY):
        raise ApiError(415, f"unsupported Content-Type {kind or '(none)'!r}: send {JSON} or {BINARY}")
    return kind


def _x_headers(request: Request) -> dict[str, str]:
    """The X-* headers as a plain dict, in one pass (Headers.get scans the header list on every lookup)."""
    return {name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in request.scope["headers"] if name[:2].lower() == b"x-"}


async def _read_body(request: Request, limit: int, expected: int | None = None, need: str = "") -> bytearray:
    return await read_body(request.headers.get("content-length"), request.receive, limit, expected, need)


def _parse(model, body: bytes):
    try:
        return model.model_validate_json(body)
    except pydantic.ValidationError as error:
        problems = error.errors(include_url=False, include_input=False, include_context=False)
        if any(problem["type"] == "json_invalid" for problem in problems):
            raise bad_request(f"body is not valid JSON: {problems[0]['msg']}") from None
        raise invalid("invalid request: " + "; ".join(
            f"{'.'.join(str(part) for part in p['loc']) or 'body'}: {p['msg']}" for p in problems[:10])) from None


async def _maybe_off_loop(off_loop: bool, fn, *args):
    return await asyncio.to_thread(fn, *args) if off_loop else fn(*args)


def _error_responses(*codes: int) -> dict:
    schema = {"type": "object", "properties": {"detail": {"type": "string"}}}
    return {code: {"description": "error", "content": {JSON: {"schema": schema}}} for code in codes}


def _install_error_handlers(app: FastAPI, state: ServiceState) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError):
        if error.reason:
            state.metrics.child(state.metrics.rejected, error.reason).inc()
        return JSONResponse({"detail": error.message}, status_code=error.status, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError):
        state.metrics.child(state.metrics.rejected, "invalid").inc()
        return await request_validation_exception_handler(request, error)


def _tuned_tables(gpu: str = "") -> list[dict]:
    """Summaries of kernels/tables/*.json (Contract 3), of the GPU overlays under kernels/tables/gpus/ (`gpu_overlay`:
    its directory; `applies`: whether it is the overlay of this service's GPU, `gpu`) and of the tables in each
    HGEMM_EXTRA_TABLES directory (they overlay the committed ones; `extra: true`), read as data from disk: no GPU or
    build needed."""
    spec = importlib_util.find_spec("kernels")
    if spec is None or not spec.submodule_search_locations:
        return []
    from kernels.tuned_tables import GPU_OVERLAYS, extra_table_dirs, gpu_slug

    own = gpu_slug(gpu) if gpu.strip(" /-") else ""
    directories = []
    for location in spec.submodule_search_locations:
        directories.append((Path(location, "tables"), {}))
        directories += [(overlay, {"gpu_overlay": overlay.name, "applies": overlay.name == own})
                        for overlay in sorted(Path(location, "tables", GPU_OVERLAYS).glob("*")) if overlay.is_dir()]
    directories += [(directory, {"directory": str(directory), "extra": True}) for directory in extra_table_dirs()]
    summaries = []
    for directory, about in directories:
        for path in sorted(directory.glob("*.json")):
            try:
                table = json.loads(path.read_text())
                entries = table.get("entries", [])
                summaries.append({"file": path.name, **about, "meta": table.get("meta", {}), "entries": len(entries),
                                  "shapes": [{key: entry.get(key) for key in ("m", "n", "k", "b_layout", "kernel")}
                                             for entry in entries[:256]]})
            except (OSError, ValueError, AttributeError) as error:
                summaries.append({"file": path.name, **about, "error": str(error)})
    return summaries


def _openapi(app: FastAPI) -> dict:
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        _, definitions = models_json_schema(WIRE_MODELS, ref_template="#/components/schemas/{model}")
        components = schema.setdefault("components", {})
        components.setdefault("schemas", {}).update(definitions.get("$defs", {}))
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer",
                                                    "description": "one of HGEMM_API_KEYS; no auth when it is empty"}}
        for path, operations in schema["paths"].items():
            if path.startswith("/v1/"):
                for operation in operations.values():
                    operation["security"] = [{"bearer": []}]
                    operation.setdefault("responses", {}).setdefault("401", {"description": "missing or wrong token"})
        app.openapi_schema = schema
    return app.openapi_schema
