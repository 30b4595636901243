"""Optional bearer-token auth for /v1/*: a pure ASGI middleware (no per-request dependency solving on the hot path).
Keys come from HGEMM_API_KEYS; with none configured every request passes. Health and metrics stay open."""
from __future__ import annotations

import hmac

import orjson

MESSAGE = b"missing or invalid bearer token: send Authorization: Bearer <one of HGEMM_API_KEYS>"


class BearerAuthMiddleware:
    def __init__(self, app, keys: list[str], metrics):
        self.app = app
        self.keys = [key.encode() for key in keys]
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not self.keys or not scope["path"].startswith("/v1/"):
            return await self.app(scope, receive, send)
        if authorized(self.keys, scope["headers"]):
            return await self.app(scope, receive, send)
        await send_unauthorized(self.metrics, send)


def authorized(keys: list[bytes], headers) -> bool:
    """True without keys, or with `Authorization: Bearer <one of keys>` among the raw ASGI headers."""
    if not keys:
        return True
    token = b""
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() != b"bearer":
                token = b""
            break
    return bool(token) and any(hmac.compare_digest(token.strip(), key) for key in keys)


async def send_unauthorized(metrics, send) -> None:
    metrics.child(metrics.rejected, "unauthorized").inc()
    body = orjson.dumps({"detail": MESSAGE.decode()})
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
