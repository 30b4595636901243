"""The JSON wire format (pydantic models; they also make the OpenAPI spec at /openapi.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# strict: JSON numbers only (lax mode would read `true` as 1.0 and "2" as 2)
Dim = Annotated[int, Field(strict=True, ge=1, le=2**31 - 1)]
Value = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Layout = Literal["row", "col"]
Accumulator = Literal["f32", "f16", "fp32", "fp16"]
Encoding = Literal["list", "base64"]
NAME_MAX_CHARS = 128  # an operand's label, JSON or binary


class Matrix(BaseModel):
    """A float16 matrix: nested lists (`data`, small matrices) or base64 of little-endian float16, row-major
    (`base64`, with `shape`)."""
    model_config = ConfigDict(extra="forbid")

    shape: tuple[Dim, Dim] | None = Field(None, description="[rows, cols]; required with base64, checked with data")
    dtype: Literal["float16"] = "float16"
    data: list[list[Value]] | None = Field(None, description="row-major nested lists")
    base64: str | None = Field(None, description="base64 of rows*cols little-endian float16 values, row-major")

    @model_validator(mode="after")
    def _one_encoding(self):
        if (self.data is None) == (self.base64 is None):
            raise ValueError("give exactly one of `data` (nested lists) or `base64`")
        if self.base64 is not None and self.shape is None:
            raise ValueError("`shape` is required with `base64`")
        return self


class HgemmRequest(BaseModel):
    """C = A @ B (b_layout=row, B is K×N) or C = A @ Bᵀ (b_layout=col, B is N×K); fp16 in and out."""
    model_config = ConfigDict(extra="forbid")

    a: Matrix = Field(description="M×K")
    b: Matrix | None = Field(None, description="K×N (row) or N×K (col); omit when `operand` is given")
    operand: str | None = Field(None, description="id of a resident B (POST /v1/operands) instead of `b`")
    b_layout: Layout | None = Field(None, description="layout of an inline b (default row); a resident operand "
                                                      "keeps the layout it was registered with")
    acc: Accumulator = Field("f32", description="accumulator: f32 (default) or f16 (fp32/fp16 accepted)")
    encoding: Encoding | None = Field(None, description="encoding of C in the response (default: that of `a`)")

    @model_validator(mode="after")
    def _one_b(self):
        if (self.b is None) == (self.operand is None):
            raise ValueError("give exactly one of `b` (inline) or `operand` (a resident operand id)")
        return self


class OperandCreate(Matrix):
    """A B operand to keep resident: K×N with b_layout=row, N×K with b_layout=col."""
    b_layout: Layout = "row"
    name: str | None = Field(None, max_length=NAME_MAX_CHARS, description="a label for humans; ids are assigned")


class HgemmResponse(BaseModel):
    shape: tuple[int, int]
    dtype: Literal["float16"] = "float16"
    data: list[list[float | None]] | None = None
    base64: str | None = None
    kernel: str = Field(description="the kernel that ran: a variant name, cublas, cublaslt or cpu_matmul")
    fallback: str | None = Field(description="null, or why it fell back (FALLBACK_REASONS)")
    backend: str
    acc: str = Field(description="accumulator requested")
    acc_computed: str = Field(description="accumulator the backend really used (the CPU backend always uses f32)")
    batch_size: int = Field(description="requests in the batch this one ran in")
    fused: int = Field(description="requests stacked into the GEMM this one ran in")


class OperandInfo(BaseModel):
    id: str
    name: str | None
    shape: tuple[int, int]
    b_layout: Layout
    k: int
    n: int
    dtype: Literal["float16"]
    bytes: int
    created_at: float


class OperandList(BaseModel):
    operands: list[OperandInfo]
    used_bytes: int
    budget_bytes: int
