"""The raw ASGI binary path (service/hot_path.py) answers exactly as the FastAPI route it stands in front of: same
status, body, headers and metrics, for good requests and for every kind of bad one."""
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from service_helpers import assert_close, binary_headers, fp16, reference, run, serving

COMPARED_HEADERS = ("content-type", "content-length", "retry-after", "www-authenticate", "x-m", "x-n", "x-dtype",
                    "x-kernel", "x-fallback", "x-backend", "x-acc", "x-acc-computed", "x-batch-size", "x-fused")


def answer(response) -> tuple:
    return response.status_code, response.content, {name: response.headers.get(name) for name in COMPARED_HEADERS}


def counters(app) -> dict:
    """hgemm_requests_total and hgemm_rejected_total samples, by labels."""
    content, _ = app.state.hgemm.metrics.render()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(content.decode())
            for s in family.samples if s.name in ("hgemm_requests_total", "hgemm_rejected_total")}


def chunks(data: bytes, size: int = 16) -> list[bytes]:
    """A body sent in pieces, without Content-Length."""
    return [data[start:start + size] for start in range(0, len(data), size)]


async def streamed(pieces: list[bytes]):
    for piece in pieces:
        yield piece


def requests(rng, operand: str) -> list[tuple[str, dict, object]]:
    """(url, headers, body) for good and bad binary requests; the bodies are fixed so both paths see the same."""
    a, b, w = fp16(rng, 5, 7), fp16(rng, 7, 3), fp16(rng, 4, 7)
    a_op = fp16(rng, 6, 7)
    ab, aw = a.tobytes() + b.tobytes(), a.tobytes() + w.tobytes()
    octet = {"content-type": "application/octet-stream"}
    return [
        ("/v1/hgemm?m=5&n=3&k=7", octet, ab),
        ("/v1/hgemm", binary_headers(m=5, n=4, k=7, b_layout="col", acc="f16"), aw),
        ("/v1/hgemm?m=5&n=4&k=7&b_layout=col", {"content-type": "Application/Octet-Stream; x=1"}, aw),
        (f"/v1/hgemm?m=6&operand={operand}", octet, a_op.tobytes()),
        (f"/v1/hgemm?m=6&k=7&operand={operand}&acc=fp16", binary_headers(m=99), a_op.tobytes()),  # the query wins
        ("/v1/hgemm?m=5&n=3&k=7", octet, chunks(ab)),  # streamed: no Content-Length
        ("/v1/hgemm?n=3&k=7", octet, ab),  # 422: no m
        ("/v1/hgemm?m=five&n=3&k=7", octet, ab),  # 422: not an integer
        ("/v1/hgemm?m=5&n=3&k=7&dtype=float32", octet, ab),  # 422: dtype
        ("/v1/hgemm?m=5&n=3&k=7&b_layout=diag", octet, ab),  # 422: layout
        ("/v1/hgemm?m=5&n=3&k=7&acc=int8", octet, ab),  # 422: accumulator
        ("/v1/hgemm?m=5&n=3", octet, ab),  # 422: no k
        ("/v1/hgemm?m=5&n=3&k=7", octet, ab[:-2]),  # 400: byte count
        ("/v1/hgemm?m=5&n=3&k=7", octet, chunks(ab + b"\0\0")),  # 400: too many bytes while streaming
        ("/v1/hgemm?m=6&operand=op_nope", octet, a_op.tobytes()),  # 404
        (f"/v1/hgemm?m=6&k=8&operand={operand}", octet, a_op.tobytes()),  # 400: k disagrees with the operand
        (f"/v1/hgemm?m=6&b_layout=row&operand={operand}", octet, a_op.tobytes()),  # 400: layout disagrees
        ("/v1/hgemm?m=4096&n=4096&k=4096", octet, ab),  # 413: over the body limit, refused before reading
        ("/v1/hgemm?m=10000&n=3&k=7", octet, ab),  # 413: too many elements
    ]


def test_the_hot_path_answers_as_the_fastapi_route(rng):
    async def scenario():
        async with serving(max_body_bytes=1 << 20, max_elements=1 << 16) as (client, app):
            hot_path = app.binary_hgemm
            calls = []

            async def counted(scope, receive, send):
                calls.append(scope["path"])
                await hot_path(scope, receive, send)

            w = fp16(rng, 4, 7)  # resident, N×K
            response = await client.post("/v1/operands?k=7&n=4&b_layout=col", content=w.tobytes(),
                                         headers={"content-type": "application/octet-stream"})
            operand = response.json()["id"]
            cases = requests(rng, operand)
            answers = {}
            for path_name, handler in (("fastapi", None), ("hot", counted)):
                app.binary_hgemm = handler
                before = counters(app)
                got = []
                for url, headers, body in cases:
                    content = body if isinstance(body, bytes) else streamed(body)
                    got.append(answer(await client.post(url, headers=headers, content=content)))
                after = counters(app)
                answers[path_name] = got, {key: after[key] - before.get(key, 0) for key in after}
            app.binary_hgemm = hot_path
            assert len(calls) == len(cases)  # the hot path really served them
            return cases, answers, w

    cases, answers, w = run(scenario())
    (fastapi_answers, fastapi_counts), (hot_answers, hot_counts) = answers["fastapi"], answers["hot"]
    for case, expected, got in zip(cases, fastapi_answers, hot_answers):
        assert got == expected, case[0]
    assert hot_counts == fastapi_counts
    statuses = [status for status, _, _ in hot_answers]
    assert statuses == [200] * 6 + [422] * 6 + [400, 400, 404, 400, 400, 413, 413]
    assert hot_counts[("hgemm_rejected_total", (("reason", "too_large"),))] == 2
    assert hot_counts[("hgemm_requests_total", (("endpoint", "/v1/hgemm"), ("method", "POST"), ("status", "200")))] == 6
    # and the answers are right: the first against float64
    _, content, headers = hot_answers[0]
    a_b = np.frombuffer(cases[0][2], dtype="<f2")
    a, b = a_b[:35].reshape(5, 7), a_b[35:].reshape(7, 3)
    assert headers["x-m"] == "5" and headers["x-n"] == "3"
    assert_close(np.frombuffer(content, dtype="<f2").reshape(5, 3), reference(a, b, "row"))


def test_the_hot_path_checks_the_bearer_token_and_readiness(rng):
    async def scenario():
        async with serving(api_keys="k1") as (client, app):
            a, b = fp16(rng, 2, 3), fp16(rng, 3, 2)
            url, body = "/v1/hgemm?m=2&n=2&k=3", a.tobytes() + b.tobytes()
            octet = {"content-type": "application/octet-stream"}
            refused = await client.post(url, headers=octet, content=body)
            wrong = await client.post(url, headers={**octet, "authorization": "Bearer k2"}, content=body)
            served = await client.post(url, headers={**octet, "authorization": "Bearer k1"}, content=body)
            app.state.hgemm.ready = False
            not_ready = await client.post(url, headers={**octet, "authorization": "Bearer k1"}, content=body)
            app.state.hgemm.ready = True
            return refused, wrong, served, not_ready, counters(app), a, b

    refused, wrong, served, not_ready, counts, a, b = run(scenario())
    assert refused.status_code == wrong.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer" and "bearer token" in refused.json()["detail"]
    assert served.status_code == 200
    assert_close(np.frombuffer(served.content, dtype="<f2").reshape(2, 2), reference(a, b, "row"))
    assert not_ready.status_code == 503 and not_ready.headers["retry-after"] == "1"
    assert "not ready" in not_ready.json()["detail"]
    assert counts[("hgemm_rejected_total", (("reason", "unauthorized"),))] == 2
    assert counts[("hgemm_requests_total", (("endpoint", "/v1/hgemm"), ("method", "POST"), ("status", "401")))] == 2
