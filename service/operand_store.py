"""Resident operands shared by the worker processes of one server (HGEMM_WORKERS > 1). A registration lands on one
worker, the requests that use it on any: so the registering worker also writes B's bytes and its description to a
directory every worker sees (tmpfs by default, service/workers.py), and a worker that meets an id it does not hold
loads it from there into its own GPU memory, once. The description file is the commit point: it is written (atomically,
by rename) after the bytes and removed before them, so a worker sees an operand whole or not at all, and a deletion on
one worker is seen by the next request on every other (which then drops its copy)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .workers import exclusive, write_atomic

INFO = ".json"
DATA = ".npy"


class SharedOperandStore:
    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_path = self.directory / ".lock"

    def locked(self):
        """Across processes: budget check + publish, so two workers cannot both take the last free bytes."""
        return exclusive(self._lock_path)

    def _path(self, operand_id: str, suffix: str) -> Path:
        if not operand_id.replace("_", "").isalnum():  # ids come from URLs: never a path
            raise KeyError(operand_id)
        return self.directory / f"{operand_id}{suffix}"

    def publish(self, info: dict, array: np.ndarray) -> None:
        data, meta = self._path(info["id"], DATA), self._path(info["id"], INFO)
        tmp = data.with_name(f".{data.name}.{os.getpid()}")
        with open(tmp, "wb") as handle:
            np.save(handle, np.ascontiguousarray(array), allow_pickle=False)
        os.replace(tmp, data)
        write_atomic(meta, json.dumps(info))  # now visible to every worker

    def exists(self, operand_id: str) -> bool:
        try:
            return self._path(operand_id, INFO).exists()
        except KeyError:
            return False

    def info(self, operand_id: str) -> dict | None:
        try:
            return json.loads(self._path(operand_id, INFO).read_text())
        except (KeyError, OSError, ValueError):
            return None

    def load(self, operand_id: str) -> tuple[dict, np.ndarray] | None:
        info = self.info(operand_id)
        if info is None:
            return None
        try:
            array = np.load(self._path(operand_id, DATA), allow_pickle=False)
        except (OSError, ValueError):  # removed between the two reads
            return None
        return info, array

    def remove(self, operand_id: str) -> bool:
        try:
            meta, data = self._path(operand_id, INFO), self._path(operand_id, DATA)
        except KeyError:
            return False
        try:
            meta.unlink()  # first: from now on no worker finds it
        except FileNotFoundError:
            return False
        data.unlink(missing_ok=True)
        return True

    def infos(self) -> list[dict]:
        out = []
        for path in self.directory.glob(f"op_*{INFO}"):
            info = self.info(path.name[:-len(INFO)])
            if info is not None:
                out.append(info)
        return out

    def used_bytes(self) -> int:
        return sum(info["bytes"] for info in self.infos())
