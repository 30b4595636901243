"""What the batcher carries: one GEMM request (`Job`), its answer (`JobResult`), and the fusion rule that turns a batch
of jobs into GEMM groups (jobs sharing a resident B and accumulator become one GEMM with their A's stacked along M)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Selection:
    kernel: str
    fallback: str | None  # None or one of FALLBACK_REASONS
    acc: str | None = None  # the accumulator the kernel ran with, when the dispatcher chose a more precise one


@dataclass
class Job:
    a: np.ndarray                 # M×K float16, C-contiguous
    b: Any                        # inline: np.ndarray float16; resident: the backend's tensor
    b_layout: str                 # "row": B is K×N; "col": B is N×K (x @ Wᵀ)
    acc: str                      # "f32" | "f16"
    operand_id: str | None = None  # set when B is a resident operand: the fusion key

    @property
    def m(self) -> int:
        return self.a.shape[0]

    @property
    def k(self) -> int:
        return self.a.shape[1]

    @property
    def n(self) -> int:
        return self.b.shape[1] if self.b_layout == "row" else self.b.shape[0]


@dataclass
class JobResult:
    c: np.ndarray                 # M×N float16
    selection: Selection
    backend: str                  # "gpu" | "cpu"
    acc_computed: str             # what the backend really accumulated in
    batch_size: int = 1           # requests in the batch this job ran in
    fused: int = 1                # requests in the GEMM this job ran in
    gemm: tuple[int, int, int] | None = None  # (M, N, K) of that GEMM (M of the fused requests stacked)


@dataclass
class Group:
    """One GEMM to run: the A's of `members` stacked along M, times one B."""
    members: list[int]            # indices into the batch
    a_parts: list[np.ndarray]
    b: Any
    b_layout: str
    acc: str

    @property
    def m(self) -> int:
        return sum(part.shape[0] for part in self.a_parts)

    @property
    def k(self) -> int:
        return self.a_parts[0].shape[1]

    @property
    def n(self) -> int:
        return self.b.shape[1] if self.b_layout == "row" else self.b.shape[0]


def fuse(jobs: list[Job]) -> list[Group]:
    """Jobs that share a resident operand and accumulator form one group; every other job is a group of its own."""
    groups: list[Group] = []
    by_key: dict[tuple[str, str], Group] = {}
    for index, job in enumerate(jobs):
        key = (job.operand_id, job.acc) if job.operand_id is not None else None
        if key is not None and key in by_key:
            group = by_key[key]
            group.members.append(index)
            group.a_parts.append(job.a)
            continue
        group = Group([index], [job.a], job.b, job.b_layout, job.acc)
        groups.append(group)
        if key is not None:
            by_key[key] = group
    return groups
