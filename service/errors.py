"""One exception type for every client-visible failure: an HTTP status, a message that names the problem, and the
`hgemm_rejected_total` reason it counts under (Contract 4)."""
from __future__ import annotations


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, reason: str = "invalid", headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason  # queue_full | timeout | too_large | unauthorized | invalid | (None: not a rejection)
        self.headers = headers or {}


def bad_request(message: str) -> ApiError:
    """The parts are individually well-formed but inconsistent or undecodable (shapes, byte counts, base64)."""
    return ApiError(400, message)


def invalid(message: str) -> ApiError:
    """A field or parameter is invalid by itself (missing, not an integer, unknown dtype/layout/accumulator)."""
    return ApiError(422, message)


def too_large(message: str) -> ApiError:
    return ApiError(413, message, reason="too_large")
