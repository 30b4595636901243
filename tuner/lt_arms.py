"""cuBLASLt algorithms as arms of the search: arm "cublaslt/a<i>" runs algorithm i of the shape's cuBLASLt heuristic
list (`kernels.cublas.CublasArm("lt_algo", i)`). Nothing to compile, so they are always "built".

What index i means must be the same when the tuner times it and when the dispatcher runs it, so both use the plan that
`CublasArm("lt_algo", i)` makes by default: the top-LT_TOP_N list (kernels.cublas.DEFAULT_TOP_N) for the 32 MiB
workspace and operand pointers aligned to LT_ALIGN_BYTES (fresh torch allocations; the tuner's operands are). The
dispatcher runs a tuned index only on calls whose pointers have that alignment (docs/dispatch.md). The search
explores the first `count` ranks of that list (a prefix: the heuristic puts its best guesses first)."""
from __future__ import annotations

from tuner.arms import Arm

LT = "cublaslt"  # Arm.config and Arm.family of every cuBLASLt arm; also the table entry's "kernel"
LT_TOP_N = 32  # length of the heuristic list the plan asks for (= kernels.cublas.DEFAULT_TOP_N, checked in tests)
LT_ALIGN_BYTES = 256  # operand pointer alignment the heuristic list is made for (= lt_algorithms' default)
DEFAULT_LT_ARMS = 16  # ranks explored per shape
LT_FIRST = 3  # ranks every shape's search tries before the agent's own proposals


def lt_arm(rank: int) -> Arm:
    """The arm for rank `rank`. Tile factors are placeholders: the features ignore them for this family."""
    if not 0 <= rank < LT_TOP_N:
        raise ValueError(f"cuBLASLt rank {rank} outside the top-{LT_TOP_N} list")
    return Arm(LT, LT, 128, 128, 64, alignment=1, algo=rank)


def lt_arms(count: int = DEFAULT_LT_ARMS) -> list[Arm]:
    return [lt_arm(i) for i in range(min(count, LT_TOP_N))]


def is_lt(arm: Arm) -> bool:
    return arm.family == LT


def lt_options(arm: Arm) -> dict:
    """The table entry's config for a cuBLASLt arm (kernels.tuned_tables: kernel "cublaslt")."""
    return {"kind": "lt_algo", "algo_index": int(arm.algo)}


def lt_list_length(m: int, n: int, k: int, b_layout: str, acc: str, list_fn=None) -> int:
    """How many algorithms the heuristic lists for this problem (the plan the dispatcher will use)."""
    if list_fn is None:
        from kernels.cublas import lt_algorithms as list_fn
    return len(list_fn(m, n, k, b_layout, acc, top_n=LT_TOP_N, align_bytes=LT_ALIGN_BYTES))
