"""Resident operands: B matrices registered once and kept where GEMMs run (GPU memory on the GPU backend), so requests
send only A and an id. The registry enforces a byte budget: a registration that would exceed it is refused with
507 Insufficient Storage (the request was fine; the server has no room — delete an operand or raise
HGEMM_OPERAND_BUDGET_BYTES)."""
from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from .errors import ApiError


@dataclass(frozen=True)
class Operand:
    id: str
    name: str | None
    b_layout: str          # "row": stored K×N; "col": stored N×K
    k: int
    n: int
    nbytes: int
    created_at: float
    tensor: Any            # the backend's resident copy

    def info(self) -> dict:
        rows, cols = (self.k, self.n) if self.b_layout == "row" else (self.n, self.k)
        return {"id": self.id, "name": self.name, "shape": [rows, cols], "b_layout": self.b_layout, "k": self.k,
                "n": self.n, "dtype": "float16", "bytes": self.nbytes, "created_at": self.created_at}


class OperandRegistry:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._operands: dict[str, Operand] = {}
        self._lock = threading.Lock()  # registration copies to the GPU off the event loop

    @property
    def used_bytes(self) -> int:
        return sum(op.nbytes for op in self._operands.values())

    def __len__(self) -> int:
        return len(self._operands)

    def check_room(self, nbytes: int) -> None:
        free = self.budget_bytes - self.used_bytes
        if nbytes > free:
            raise ApiError(507, f"operand of {nbytes} bytes does not fit: {free} of {self.budget_bytes} budget bytes "
                                f"free (HGEMM_OPERAND_BUDGET_BYTES); delete an operand first", reason=None)

    def add(self, tensor: Any, nbytes: int, b_layout: str, k: int, n: int, name: str | None) -> Operand:
        with self._lock:
            self.check_room(nbytes)
            operand = Operand("op_" + secrets.token_hex(8), name, b_layout, k, n, nbytes, time.time(), tensor)
            self._operands[operand.id] = operand
            return operand

    def get(self, operand_id: str) -> Operand:
        operand = self._operands.get(operand_id)
        if operand is None:
            raise ApiError(404, f"unknown operand id {operand_id!r} (register one with POST /v1/operands)")
        return operand

    def remove(self, operand_id: str) -> Operand:
        with self._lock:
            operand = self.get(operand_id)
            del self._operands[operand_id]
            return operand

    def list(self) -> list[Operand]:
        return sorted(self._operands.values(), key=lambda op: op.created_at)
