"""Resumability: every finished shape is appended to a JSONL file as soon as it is done; a restarted run skips the
shapes found there. Appends are flushed and fsynced; a torn last line (a crash mid-write) is ignored."""
from __future__ import annotations

import json
import os
from pathlib import Path


def shape_key(mnk: str, acc: str, b_layout: str) -> str:
    return f"{mnk}|{acc}|{b_layout}"


class ResultStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def load(self) -> dict[str, dict]:
        done: dict[str, dict] = {}
        if not self.path.exists():
            return done
        for line in self.path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn write of an interrupted run: that shape runs again
            done[shape_key(rec["mnk"], rec["acc"], rec["b_layout"])] = rec
        return done

    def append(self, record: dict) -> None:
        torn = self.path.exists() and self.path.stat().st_size > 0 and not self.path.read_bytes().endswith(b"\n")
        with open(self.path, "a") as f:
            f.write(("\n" if torn else "") + json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
