"""The service's configuration: one pydantic-settings class, read from `HGEMM_*` environment variables (Contract 5)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MiB = 1 << 20
GiB = 1 << 30


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HGEMM_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64, description="server processes on the one port, each with its own event loop, "
                                                     "batcher and GPU context (service/workers.py)")
    shared_dir: str = Field("", description="with workers > 1: where they share resident operands, metrics and "
                                            "untuned-shape counts (python -m service makes a fresh one when empty)")
    backend: Literal["auto", "gpu", "cpu"] = "auto"
    max_batch_size: int = Field(8, ge=1, le=256)
    max_queue_delay_us: int = Field(500, ge=0, le=10_000_000)
    batch_gather: Literal["arriving", "delay"] = Field(
        "arriving", description="arriving: a batch waits (at most the delay) only for requests still being read; "
                                "delay: it always waits the delay for a full batch (closed-loop clients)")
    queue_capacity: int = Field(512, ge=1)
    request_timeout_s: float = Field(10.0, gt=0)
    max_body_bytes: int = Field(128 * MiB, ge=1)
    max_elements: int = Field(4096 * 4096, ge=1, description="largest element count of any one matrix (A, B or C)")
    operand_budget_bytes: int = Field(2 * GiB, ge=0)
    api_keys: str = Field("", description="comma-separated bearer tokens; empty disables auth")
    num_streams: int = Field(8, ge=1, le=64)
    canary_rate: float = Field(0.0, ge=0.0, le=1.0)
    gil_switch_interval_us: int = Field(
        0, ge=0, le=100_000,
        description="Python's thread switch interval (sys.setswitchinterval) in µs; 0 keeps Python's 5000. The event "
                    "loop and the batch thread share the GIL: a shorter interval bounds how long one waits for the "
                    "other (an experiment for large bodies, docs/notes.md)")

    @property
    def api_key_list(self) -> list[str]:
        return [key.strip() for key in self.api_keys.split(",") if key.strip()]

    @property
    def max_queue_delay_s(self) -> float:
        return self.max_queue_delay_us / 1e6
