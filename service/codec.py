"""Wire <-> numpy: JSON matrices (nested lists or base64 of little-endian float16) and the binary fast path
(`application/octet-stream`: A's bytes then B's bytes, shapes in query parameters or X-* headers). Every check raises
an ApiError whose message names the problem: 422 for a bad field or parameter, 400 for parts that do not fit together
(shapes, byte counts, base64), 404 for an unknown operand, 413 for too many elements."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .errors import ApiError, bad_request, invalid, too_large
from .jobs import Job, JobResult
from .operands import Operand, OperandRegistry
from .schemas import HgemmRequest, Matrix

FP16 = np.dtype("<f2")  # the wire dtype: little-endian IEEE half
ACCUMULATORS = {"f32": "f32", "fp32": "f32", "f16": "f16", "fp16": "f16"}
LAYOUTS = ("row", "col")
DTYPES = ("float16", "fp16", "f16", "half")


def b_shape(k: int, n: int, b_layout: str) -> tuple[int, int]:
    """Rows×cols of B as sent: K×N for row, N×K for col (the x @ Wᵀ case)."""
    return (k, n) if b_layout == "row" else (n, k)


def check_elements(name: str, rows: int, cols: int, limit: int) -> None:
    if rows * cols > limit:
        raise too_large(f"{name} is {rows}x{cols} = {rows * cols} elements; the limit is {limit} "
                        f"(HGEMM_MAX_ELEMENTS)")


def check_dims(m: int, n: int, k: int, limit: int, b_layout: str) -> None:
    check_elements("a", m, k, limit)
    check_elements("b", *b_shape(k, n, b_layout), limit)
    check_elements("c", m, n, limit)


# ---------------------------------------------------------------- JSON

def matrix_from_json(matrix: Matrix, name: str, limit: int) -> np.ndarray:
    if matrix.base64 is not None:
        rows, cols = matrix.shape
        check_elements(name, rows, cols, limit)
        try:
            raw = base64.b64decode(matrix.base64, validate=True)
        except (binascii.Error, ValueError) as error:
            raise bad_request(f"{name}.base64 is not valid base64: {error}") from None
        expected = rows * cols * FP16.itemsize
        if len(raw) != expected:
            raise bad_request(f"{name}.base64 decodes to {len(raw)} bytes, but shape [{rows}, {cols}] float16 needs "
                              f"{expected}")
        return np.frombuffer(bytearray(raw), dtype=FP16).reshape(rows, cols)
    try:
        values = np.array(matrix.data, dtype=np.float64)
    except ValueError:
        raise bad_request(f"{name}.data is ragged: its rows have different lengths") from None
    if values.ndim != 2 or values.size == 0:
        raise bad_request(f"{name}.data must be a non-empty list of non-empty rows (got shape {list(values.shape)})")
    if matrix.shape is not None and tuple(matrix.shape) != values.shape:
        raise bad_request(f"{name}.shape says {list(matrix.shape)} but {name}.data is {list(values.shape)}")
    check_elements(name, *values.shape, limit)
    with np.errstate(over="ignore"):
        half = values.astype(FP16)
    if not np.isfinite(half).all():
        raise bad_request(f"{name}.data has values outside the finite float16 range (|x| <= 65504)")
    return half


def matrix_to_json(c: np.ndarray, encoding: str) -> dict:
    if encoding == "base64":
        return {"shape": list(c.shape), "dtype": "float16",
                "base64": base64.b64encode(np.ascontiguousarray(c, dtype=FP16).tobytes()).decode("ascii")}
    return {"shape": list(c.shape), "dtype": "float16", "data": c.astype(np.float32).tolist()}


def check_inner(a_shape: tuple[int, int], b_rows_cols: tuple[int, int], b_layout: str) -> tuple[int, int, int]:
    """-> (m, n, k) or 400 naming both shapes."""
    m, k = a_shape
    rows, cols = b_rows_cols
    b_k, n = (rows, cols) if b_layout == "row" else (cols, rows)
    if b_k != k:
        side = "rows" if b_layout == "row" else "columns"
        raise bad_request(f"shapes do not match: a is {m}x{k} (K={k}) but b is {rows}x{cols} with b_layout={b_layout}, "
                          f"so its {side} give K={b_k}")
    return m, n, k


def job_from_json(request: HgemmRequest, registry: OperandRegistry, limit: int) -> tuple[Job, str]:
    """-> (job, response encoding)."""
    a = matrix_from_json(request.a, "a", limit)
    acc = ACCUMULATORS[request.acc]
    encoding = request.encoding or ("base64" if request.a.base64 is not None else "list")
    if request.operand is not None:
        operand = registry.get(request.operand)
        if request.b_layout is not None and request.b_layout != operand.b_layout:
            raise bad_request(f"b_layout={request.b_layout} but operand {operand.id} was registered with "
                              f"b_layout={operand.b_layout}")
        m, n, k = check_inner(a.shape, b_shape(operand.k, operand.n, operand.b_layout), operand.b_layout)
        check_elements("c", m, n, limit)
        return Job(a, operand.tensor, operand.b_layout, acc, operand.id), encoding
    b_layout = request.b_layout or "row"
    b = matrix_from_json(request.b, "b", limit)
    m, n, k = check_inner(a.shape, b.shape, b_layout)
    check_elements("c", m, n, limit)
    return Job(a, b, b_layout, acc), encoding


def result_to_json(result: JobResult, acc: str, encoding: str) -> dict:
    body = matrix_to_json(result.c, encoding)
    body.update(provenance(result, acc))
    return body


def provenance(result: JobResult, acc: str) -> dict:
    return {"kernel": result.selection.kernel, "fallback": result.selection.fallback, "backend": result.backend,
            "acc": acc, "acc_computed": result.acc_computed, "batch_size": result.batch_size, "fused": result.fused}


# ---------------------------------------------------------------- binary

@dataclass(frozen=True)
class BinaryParams:
    m: int | None
    n: int | None
    k: int | None
    b_layout: str | None
    acc: str
    operand: str | None


def _param(query: Mapping[str, str], headers: Mapping[str, str], name: str) -> str | None:
    value = query.get(name)
    if value is None:
        value = headers.get("x-" + name.replace("_", "-"))
    return value


def _dim(query, headers, name: str) -> int | None:
    raw = _param(query, headers, name)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise invalid(f"{name}={raw!r} is not an integer (query ?{name}= or header X-{name.upper()})") from None
    if not 1 <= value <= 2**31 - 1:
        raise invalid(f"{name}={value} is out of range: dimensions are 1 .. 2^31-1")
    return value


def binary_params(query: Mapping[str, str], headers: Mapping[str, str]) -> BinaryParams:
    """Read m, n, k, b_layout, acc, operand, dtype from `?name=` or `X-Name:` (query wins)."""
    dtype = (_param(query, headers, "dtype") or "float16").strip().lower()
    if dtype not in DTYPES:
        raise invalid(f"unsupported dtype {dtype!r}: the service computes float16 only")
    layout = _param(query, headers, "b_layout")
    if layout is not None and layout.strip().lower() not in LAYOUTS:
        raise invalid(f"unsupported b_layout {layout!r}: use row (B is K×N) or col (B is N×K)")
    acc = (_param(query, headers, "acc") or "f32").strip().lower()
    if acc not in ACCUMULATORS:
        raise invalid(f"unsupported acc {acc!r}: use f32 or f16")
    operand = _param(query, headers, "operand")
    return BinaryParams(_dim(query, headers, "m"), _dim(query, headers, "n"), _dim(query, headers, "k"),
                        layout.strip().lower() if layout else None, ACCUMULATORS[acc], operand or None)


@dataclass(frozen=True)
class BinaryPlan:
    m: int
    n: int
    k: int
    b_layout: str
    operand: Operand | None

    @property
    def a_bytes(self) -> int:
        return self.m * self.k * FP16.itemsize

    @property
    def body_bytes(self) -> int:
        return self.a_bytes + (0 if self.operand else self.k * self.n * FP16.itemsize)

    def describe(self) -> str:
        parts = f"float16 a {self.m}x{self.k} ({self.a_bytes} bytes)"
        if self.operand is None:
            rows, cols = b_shape(self.k, self.n, self.b_layout)
            parts += f" + b {rows}x{cols} ({self.body_bytes - self.a_bytes} bytes)"
        else:
            parts += f" (b is resident operand {self.operand.id})"
        return f"{parts} needs {self.body_bytes}"


def binary_plan(params: BinaryParams, registry: OperandRegistry, limit: int) -> BinaryPlan:
    """What the body must hold, known before reading it (so the limits apply before the body is read)."""
    if params.m is None:
        raise invalid("m is required (query ?m= or header X-M)")
    if params.operand is not None:
        operand = registry.get(params.operand)
        if params.b_layout is not None and params.b_layout != operand.b_layout:
            raise bad_request(f"b_layout={params.b_layout} but operand {operand.id} was registered with "
                              f"b_layout={operand.b_layout}")
        for name, given, actual in (("k", params.k, operand.k), ("n", params.n, operand.n)):
            if given is not None and given != actual:
                raise bad_request(f"{name}={given} but operand {operand.id} has {name}={actual}")
        check_dims(params.m, operand.n, operand.k, limit, operand.b_layout)
        return BinaryPlan(params.m, operand.n, operand.k, operand.b_layout, operand)
    missing = [name for name in ("n", "k") if getattr(params, name) is None]
    if missing:
        raise invalid(f"{' and '.join(missing)} required without a resident operand (query ?n=&k= or headers X-N, X-K)")
    layout = params.b_layout or "row"
    check_dims(params.m, params.n, params.k, limit, layout)
    return BinaryPlan(params.m, params.n, params.k, layout, None)


def job_from_binary(body: bytearray, plan: BinaryPlan, acc: str) -> Job:
    if len(body) != plan.body_bytes:
        raise bad_request(f"body has {len(body)} bytes but {plan.describe()}")
    values = np.frombuffer(body, dtype=FP16)  # no copy: a view on the body
    a = values[:plan.m * plan.k].reshape(plan.m, plan.k)
    if plan.operand is not None:
        return Job(a, plan.operand.tensor, plan.b_layout, acc, plan.operand.id)
    b = values[plan.m * plan.k:].reshape(b_shape(plan.k, plan.n, plan.b_layout))
    return Job(a, b, plan.b_layout, acc)


def binary_headers(result: JobResult, acc: str) -> dict[str, str]:
    m, n = result.c.shape
    return {"X-M": str(m), "X-N": str(n), "X-Dtype": "float16", "X-Kernel": result.selection.kernel,
            "X-Fallback": result.selection.fallback or "none", "X-Backend": result.backend, "X-Acc": acc,
            "X-Acc-Computed": result.acc_computed, "X-Batch-Size": str(result.batch_size),
            "X-Fused": str(result.fused)}
