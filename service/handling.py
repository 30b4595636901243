"""What the FastAPI routes and the raw binary path (hot_path.py) share: readiness, reading a body within its limits
from an ASGI `receive`, and submitting a job with the batcher's failures mapped to HTTP statuses."""
from __future__ import annotations

from starlette.requests import ClientDisconnect

from .batcher import Closed, QueueFull, RequestTimeout
from .errors import ApiError, bad_request, too_large
from .state import ServiceState


def require_ready(state: ServiceState) -> None:
    if not state.ready:
        raise ApiError(503, f"not ready: {state.not_ready_reason}", reason=None, headers={"Retry-After": "1"})


async def read_body(declared: str | bytes | None, receive, limit: int, expected: int | None = None,
                    need: str = "") -> bytearray:
    """Refuse an oversized body from its Content-Length before reading it, and count while streaming regardless.
    `receive` is the ASGI receive callable (the body is read once, straight from the server's messages)."""
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            shown = declared.decode("latin-1") if isinstance(declared, bytes) else declared
            raise bad_request(f"Content-Length {shown!r} is not an integer") from None
        if size > limit:
            raise too_large(f"body of {size} bytes exceeds the limit of {limit} (HGEMM_MAX_BODY_BYTES)")
        if expected is not None and size != expected:
            raise bad_request(f"body has {size} bytes but {need}")
    if expected is not None and expected > limit:
        raise too_large(f"the given shapes need a body of {expected} bytes; the limit is {limit} (HGEMM_MAX_BODY_BYTES)")
    cap = limit if expected is None else expected
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        body += message.get("body", b"")
        if len(body) > cap:
            if expected is None:
                raise too_large(f"body exceeds the limit of {limit} bytes (HGEMM_MAX_BODY_BYTES)")
            raise bad_request(f"body has more than {expected} bytes but {need}")
        if not message.get("more_body", False):
            break
    if expected is not None and len(body) != expected:
        raise bad_request(f"body has {len(body)} bytes but {need}")
    return body


async def submit(state: ServiceState, job):
    try:
        result = await state.batcher.submit(job)
    except QueueFull as error:
        raise ApiError(503, f"{error}; retry later", reason="queue_full", headers={"Retry-After": "1"}) from None
    except Closed as error:
        raise ApiError(503, str(error), reason=None, headers={"Retry-After": "1"}) from None
    except RequestTimeout as error:
        raise ApiError(504, f"request timed out: {error} (HGEMM_REQUEST_TIMEOUT_S)", reason="timeout") from None
    except Exception as error:  # the GEMM itself failed: a server fault, reported to this request only
        raise ApiError(500, f"gemm failed: {type(error).__name__}: {error}", reason=None) from None
    return result
