"""The naive baseline for the load comparison: FastAPI + one torch.matmul per request. No batching, no streams, no
tuned kernels, no metrics. It speaks the binary subset of the service's API and its JSON form with inline nested
lists, so every Locust scenario (small_json, binary, resident, mixed) runs against both:

    POST   /v1/hgemm               body A (+ B) as little-endian fp16; m, n, k, b_layout, operand in query or X-* headers
                                   or JSON {"a": {"data": [[...]]}, "b": {"data": [[...]]}, "b_layout": "row"}
    POST   /v1/operands            body B; k, n, b_layout, name  -> {"id": ...}
    DELETE /v1/operands/{id}
    GET    /health/live, /health/ready

    python -m loadtest.naive_server --port 8001          # cuda:0 when available, else CPU (float32 compute)

`acc` is accepted and ignored: torch's fp16 matmul on the GPU accumulates in fp32 either way.
"""

import argparse
import itertools

# Locust imports every .py file in loadtest/: the heavy imports live inside the functions. (No `from __future__ import
# annotations`: FastAPI must resolve the Request annotations of the handlers, which are local names.)


def create_app(device: str | None = None):
    import numpy as np
    import torch
    from fastapi import FastAPI, HTTPException, Request, Response
    from fastapi.concurrency import run_in_threadpool

    device = device or ("cuda:0" if torch.cuda.is_available() else "cpu")
    compute_dtype = torch.float16 if device.startswith("cuda") else torch.float32  # CPU fp16 matmul is very slow
    operands: dict[str, tuple[torch.Tensor, str, int, int]] = {}   # id -> (B on device, layout, k, n)
    ids = itertools.count(1)
    app = FastAPI(title="naive HGEMM baseline")

    def param(request: Request, name: str) -> str | None:
        return request.query_params.get(name) or request.headers.get("x-" + name.replace("_", "-"))

    def dim(request: Request, name: str) -> int:
        raw = param(request, name)
        if raw is None or not raw.isdigit() or int(raw) < 1:
            raise HTTPException(422, f"{name} must be a positive integer (query ?{name}= or header X-{name.upper()})")
        return int(raw)

    def layout_of(request: Request) -> str:
        layout = param(request, "b_layout") or "row"
        if layout not in ("row", "col"):
            raise HTTPException(422, "b_layout must be row or col")
        return layout

    def to_device(raw: bytes, rows: int, cols: int) -> torch.Tensor:
        host = torch.from_numpy(np.frombuffer(raw, dtype="<f2").reshape(rows, cols).copy())
        return host.to(device=device, dtype=compute_dtype)

    def gemm(a: torch.Tensor, b: torch.Tensor, layout: str) -> bytes:
        c = torch.matmul(a, b.t() if layout == "col" else b)
        return c.to(torch.float16).cpu().numpy().tobytes()   # .cpu() synchronizes: one request, one sync

    def json_matrix(value, what: str) -> torch.Tensor:
        rows = value.get("data") if isinstance(value, dict) else None
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows) \
                or len({len(r) for r in rows}) != 1:
            raise HTTPException(422, f"{what} must be {{'data': [[...], ...]}} with rows of equal length")
        try:
            return torch.tensor(rows, dtype=torch.float16).to(device=device, dtype=compute_dtype)
        except (TypeError, ValueError) as error:
            raise HTTPException(422, f"{what}: {error}") from None

    async def hgemm_json(request: Request) -> dict:
        try:
            payload = await request.json()
        except ValueError:
            raise HTTPException(400, "body is not valid JSON") from None
        if not isinstance(payload, dict) or "a" not in payload or "b" not in payload:
            raise HTTPException(422, "JSON requests need inline `a` and `b` (the naive baseline keeps no operands)")
        layout = payload.get("b_layout") or "row"
        if layout not in ("row", "col"):
            raise HTTPException(422, "b_layout must be row or col")
        a, b = json_matrix(payload["a"], "a"), json_matrix(payload["b"], "b")
        if a.shape[1] != (b.shape[1] if layout == "col" else b.shape[0]):
            raise HTTPException(422, f"a {tuple(a.shape)} and b {tuple(b.shape)} do not match for b_layout={layout}")

        def run() -> list:
            c = torch.matmul(a, b.t() if layout == "col" else b)
            return c.to(torch.float16).cpu().float().tolist()

        data = await run_in_threadpool(run)
        return {"shape": [len(data), len(data[0])], "dtype": "float16", "data": data, "kernel": "torch.matmul"}

    @app.post("/v1/hgemm")
    async def hgemm(request: Request) -> Response:
        if request.headers.get("content-type", "").startswith("application/json"):
            return await hgemm_json(request)
        body = await request.body()
        m = dim(request, "m")
        operand = param(request, "operand")
        if operand is not None:
            if operand not in operands:
                raise HTTPException(404, f"unknown operand {operand}")
            b, layout, k, n = operands[operand]
            expected = m * k * 2
        else:
            n, k, layout = dim(request, "n"), dim(request, "k"), layout_of(request)
            expected = (m * k + k * n) * 2
        if len(body) != expected:
            raise HTTPException(400, f"body has {len(body)} bytes, expected {expected}")

        def run() -> bytes:
            a = to_device(body[:m * k * 2], m, k)
            rhs = b if operand is not None else to_device(body[m * k * 2:], *((n, k) if layout == "col" else (k, n)))
            return gemm(a, rhs, layout)

        c = await run_in_threadpool(run)
        return Response(c, media_type="application/octet-stream",
                        headers={"X-M": str(m), "X-N": str(n), "X-Kernel": "torch.matmul", "X-Batch-Size": "1"})

    @app.post("/v1/operands", status_code=201)
    async def register(request: Request) -> dict:
        body = await request.body()
        k, n, layout = dim(request, "k"), dim(request, "n"), layout_of(request)
        if len(body) != k * n * 2:
            raise HTTPException(400, f"body has {len(body)} bytes, expected {k * n * 2}")
        operand_id = f"naive_{next(ids)}"
        operands[operand_id] = (to_device(body, *((n, k) if layout == "col" else (k, n))), layout, k, n)
        return {"id": operand_id, "k": k, "n": n, "b_layout": layout, "name": param(request, "name")}

    @app.delete("/v1/operands/{operand_id}")
    async def delete(operand_id: str) -> dict:
        if operands.pop(operand_id, None) is None:
            raise HTTPException(404, f"unknown operand {operand_id}")
        return {"id": operand_id}

    @app.get("/health/live")
    @app.get("/health/ready")
    async def health() -> dict:
        return {"status": "ready", "backend": "naive", "device": device}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--device", help="torch device (default: cuda:0 when available, else cpu)")
    args = parser.parse_args()
    import uvicorn
    uvicorn.run(create_app(args.device), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
