"""Resident operands: B matrices registered once and kept where GEMMs run (GPU memory on the GPU backend), so requests
send only A and an id. The registry enforces a byte budget: a registration that would exceed it is refused with
507 Insufficient Storage (the request was fine; the server has no room — delete an operand or raise
HGEMM_OPERAND_BUDGET_BYTES). With several worker processes the registry sits on a SharedOperandStore
(service/operand_store.py): the budget then counts the server's operands once, while each worker that serves one holds
its own copy."""
from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import ApiError
from .operand_store import SharedOperandStore


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

    @classmethod
    def from_info(cls, info: dict, tensor: Any) -> "Operand":
        return cls(info["id"], info["name"], info["b_layout"], info["k"], info["n"], info["bytes"], info["created_at"],
                   tensor)

    def info(self) -> dict:
        rows, cols = (self.k, self.n) if self.b_layout == "row" else (self.n, self.k)
        return {"id": self.id, "name": self.name, "shape": [rows, cols], "b_layout": self.b_layout, "k": self.k,
                "n": self.n, "dtype": "float16", "bytes": self.nbytes, "created_at": self.created_at}


class OperandRegistry:
    def __init__(self, budget_bytes: int, store: SharedOperandStore | None = None,
                 loader: Callable[[np.ndarray], Any] | None = None):
        self.budget_bytes = budget_bytes
        self.store = store        # shared with the other worker processes, or None (one process)
        self.loader = loader      # the backend's resident(): a shared operand this worker has not loaded yet
        self._operands: dict[str, Operand] = {}
        self._lock = threading.Lock()  # registration copies to the GPU off the event loop

    @property
    def used_bytes(self) -> int:
        if self.store is not None:
            return self.store.used_bytes()
        return sum(op.nbytes for op in self._operands.values())

    def __len__(self) -> int:
        return len(self.store.infos()) if self.store is not None else len(self._operands)

    def check_room(self, nbytes: int) -> None:
        free = self.budget_bytes - self.used_bytes
        if nbytes > free:
            raise ApiError(507, f"operand of {nbytes} bytes does not fit: {free} of {self.budget_bytes} budget bytes "
                                f"free (HGEMM_OPERAND_BUDGET_BYTES); delete an operand first", reason=None)

    def add(self, tensor: Any, nbytes: int, b_layout: str, k: int, n: int, name: str | None,
            array: np.ndarray | None = None) -> Operand:
        """`array`: B as registered (host memory), which the shared store needs so other workers can load it."""
        with self._lock:
            operand = Operand("op_" + secrets.token_hex(8), name, b_layout, k, n, nbytes, time.time(), tensor)
            if self.store is None:
                self.check_room(nbytes)
            else:
                if array is None:
                    raise ValueError("a registry on a shared store needs the operand's host array")
                self._sweep()
                with self.store.locked():
                    self.check_room(nbytes)
                    self.store.publish(operand.info(), array)
            self._operands[operand.id] = operand
            return operand

    def get(self, operand_id: str) -> Operand:
        operand = self._operands.get(operand_id)
        if self.store is not None:
            if not self.store.exists(operand_id):  # deleted, maybe by another worker: drop our copy too
                if operand is not None:
                    self._operands.pop(operand_id, None)
                operand = None
            elif operand is None:
                operand = self._load_shared(operand_id)
        if operand is None:
            raise ApiError(404, f"unknown operand id {operand_id!r} (register one with POST /v1/operands)")
        return operand

    def _load_shared(self, operand_id: str) -> Operand | None:
        """Another worker registered it: copy it to this worker's device once (under the lock: once per worker)."""
        with self._lock:
            operand = self._operands.get(operand_id)
            if operand is None:
                loaded = self.store.load(operand_id)
                if loaded is None:
                    return None
                info, array = loaded
                operand = Operand.from_info(info, self.loader(array) if self.loader else array)
                self._operands[operand_id] = operand
            return operand

    def _sweep(self) -> None:
        """Free this worker's copies of operands another worker deleted (called under the lock)."""
        for operand_id in [i for i in self._operands if not self.store.exists(i)]:
            del self._operands[operand_id]

    def remove(self, operand_id: str) -> Operand:
        with self._lock:
            if self.store is None:
                operand = self._operands.pop(operand_id, None)
            else:
                info = self.store.info(operand_id)
                operand = self._operands.pop(operand_id, None)
                if not self.store.remove(operand_id):
                    operand = None
                elif operand is None and info is not None:
                    operand = Operand.from_info(info, None)
        if operand is None:
            raise ApiError(404, f"unknown operand id {operand_id!r} (register one with POST /v1/operands)")
        return operand

    def list(self) -> list[Operand]:
        if self.store is not None:
            with self._lock:
                self._sweep()
            return sorted((Operand.from_info(info, None) for info in self.store.infos()), key=lambda op: op.created_at)
        return sorted(self._operands.values(), key=lambda op: op.created_at)
