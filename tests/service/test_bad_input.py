"""Every bad input gets a 4xx whose message names the problem — never a 500, and never a disturbed neighbour."""
import asyncio
import base64

import numpy as np
import pytest

from service_helpers import assert_close, binary_headers, fp16, reference, run, serving

A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]           # 2x3
B = [[1.0, 0.5], [0.25, 2.0], [1.5, -1.0]]     # 3x2
B64_A = base64.b64encode(np.array(A, dtype="<f2").tobytes()).decode()

JSON_CASES = [
    ("ragged rows", {"a": {"data": [[1.0, 2.0], [3.0]]}, "b": {"data": B}}, 400, "ragged"),
    ("inner dims differ", {"a": {"data": A}, "b": {"data": A}}, 400, "shapes do not match"),
    ("inner dims differ (col)", {"a": {"data": A}, "b": {"data": A}, "b_layout": "col"}, 200, None),
    ("shape disagrees with data", {"a": {"shape": [3, 2], "data": A}, "b": {"data": B}}, 400, "a.shape says"),
    ("bad base64", {"a": {"shape": [2, 3], "base64": "!!notbase64!!"}, "b": {"data": B}}, 400, "not valid base64"),
    ("base64 byte count", {"a": {"shape": [2, 4], "base64": B64_A}, "b": {"data": B}}, 400, "decodes to 12 bytes"),
    ("base64 without shape", {"a": {"base64": B64_A}, "b": {"data": B}}, 422, "shape"),
    ("no b and no operand", {"a": {"data": A}}, 422, "exactly one of `b`"),
    ("b and operand", {"a": {"data": A}, "b": {"data": B}, "operand": "op_x"}, 422, "exactly one of `b`"),
    ("unknown operand", {"a": {"data": A}, "operand": "op_nope"}, 404, "unknown operand id 'op_nope'"),
    ("unsupported dtype", {"a": {"data": A, "dtype": "float32"}, "b": {"data": B}}, 422, "a.dtype"),
    ("unsupported layout", {"a": {"data": A}, "b": {"data": B}, "b_layout": "diag"}, 422, "b_layout"),
    ("unsupported accumulator", {"a": {"data": A}, "b": {"data": B}, "acc": "int8"}, 422, "acc"),
    ("beyond fp16 range", {"a": {"data": [[1e6, 0.0, 1.0], [1, 2, 3]]}, "b": {"data": B}}, 400, "float16 range"),
    ("empty matrix", {"a": {"data": []}, "b": {"data": B}}, 400, "non-empty"),
    ("empty rows", {"a": {"data": [[], []]}, "b": {"data": B}}, 400, "non-empty"),
    ("zero dimension", {"a": {"shape": [0, 3], "base64": ""}, "b": {"data": B}}, 422, "a.shape"),
    ("unknown field", {"a": {"data": A}, "b": {"data": B}, "alpha": 2}, 422, "alpha"),
    ("a is not a matrix", {"a": 3, "b": {"data": B}}, 422, "a"),
    ("boolean element", {"a": {"data": [[True, 2.0, 3.0], [4, 5, 6]]}, "b": {"data": B}}, 422, "a.data.0.0"),
    ("string element", {"a": {"data": [["1.5", 2.0, 3.0], [4, 5, 6]]}, "b": {"data": B}}, 422, "a.data.0.0"),
    ("null element", {"a": {"data": A}, "b": {"data": [[1.0, None], [0.25, 2.0], [1.5, -1.0]]}}, 422, "b.data.0.1"),
    ("string dimension", {"a": {"shape": ["2", 3], "base64": B64_A}, "b": {"data": B}}, 422, "a.shape.0"),
    ("fractional dimension", {"a": {"shape": [2.5, 3], "base64": B64_A}, "b": {"data": B}}, 422, "a.shape.0"),
    ("integer elements", {"a": {"data": [[1, 2, 3], [4, 5, 6]]}, "b": {"data": B}}, 200, None),
]


def test_bad_json_requests_name_the_problem():
    async def scenario():
        async with serving() as (client, _):
            for label, body, status, words in JSON_CASES:
                r = await client.post("/v1/hgemm", json=body)
                assert r.status_code == status, (label, r.status_code, r.text)
                if words:
                    assert words in r.json()["detail"], (label, r.json())
            r = await client.post("/v1/hgemm", content=b'{"a": [1,', headers={"content-type": "application/json"})
            assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    run(scenario())


def test_bad_binary_requests_name_the_problem(rng):
    a, b = fp16(rng, 4, 8), fp16(rng, 8, 3)
    good = a.tobytes() + b.tobytes()
    cases = [
        ("missing m", dict(n=3, k=8), good, 422, "m is required"),
        ("missing n and k", dict(m=4), good, 422, "n and k required"),
        ("m not an integer", dict(m="four", n=3, k=8), good, 422, "m='four' is not an integer"),
        ("m zero", dict(m=0, n=3, k=8), good, 422, "m=0 is out of range"),
        ("short body", dict(m=4, n=3, k=8), good[:-2], 400, "+ b 8x3 (48 bytes) needs 112"),
        ("long body", dict(m=4, n=3, k=8), good + b"\0\0", 400, "+ b 8x3 (48 bytes) needs 112"),
        ("shapes vs body", dict(m=4, n=4, k=8), good, 400, "needs 128"),
        ("dtype", dict(m=4, n=3, k=8, dtype="float32"), good, 422, "unsupported dtype 'float32'"),
        ("layout", dict(m=4, n=3, k=8, b_layout="diag"), good, 422, "unsupported b_layout 'diag'"),
        ("accumulator", dict(m=4, n=3, k=8, acc="bf16"), good, 422, "unsupported acc 'bf16'"),
        ("unknown operand", dict(m=4, operand="op_missing"), a.tobytes(), 404, "unknown operand id 'op_missing'"),
    ]

    async def scenario():
        async with serving() as (client, _):
            for label, params, body, status, words in cases:
                r = await client.post("/v1/hgemm", content=body, headers=binary_headers(**params))
                assert r.status_code == status, (label, r.status_code, r.text)
                assert words in r.json()["detail"], (label, r.json())
            r = await client.post("/v1/hgemm", content=good, headers={"content-type": "text/plain"})
            assert r.status_code == 415 and "Content-Type 'text/plain'" in r.json()["detail"]
            r = await client.post("/v1/hgemm", content=good)
            assert r.status_code == 415 and "(none)" in r.json()["detail"]
    run(scenario())


class CountingBody:
    """An async request body that records how much of it the server pulled."""

    def __init__(self, chunks: int, chunk_bytes: int):
        self.chunks, self.chunk = chunks, b"\x00\x3c" * (chunk_bytes // 2)  # fp16 1.0
        self.sent = 0

    async def __aiter__(self):
        for _ in range(self.chunks):
            self.sent += 1
            yield self.chunk


def test_oversized_bodies_get_413_before_being_read():
    async def scenario():
        async with serving(max_body_bytes=4096, max_elements=1 << 20) as (client, _):
            body = CountingBody(100, 1024)  # 100 KiB declared up front: refused from Content-Length alone
            r = await client.post("/v1/hgemm", content=body, headers={
                "content-type": "application/json", "content-length": str(100 * 1024)})
            assert r.status_code == 413 and "HGEMM_MAX_BODY_BYTES" in r.json()["detail"]
            assert body.sent == 0
            body = CountingBody(100, 1024)  # chunked, no length: refused once the count passes the limit
            r = await client.post("/v1/hgemm", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 413 and "HGEMM_MAX_BODY_BYTES" in r.json()["detail"]
            assert body.sent < 10
            body = CountingBody(100, 1024)  # binary: shapes alone show the body would be too big
            r = await client.post("/v1/hgemm", content=body, headers=binary_headers(m=64, n=64, k=400))
            assert r.status_code == 413 and body.sent == 0
    run(scenario())


def test_element_limits_give_413():
    async def scenario():
        async with serving(max_elements=1000) as (client, _):
            r = await client.post("/v1/hgemm", content=b"", headers=binary_headers(m=100, n=2, k=11))
            assert r.status_code == 413 and "a is 100x11 = 1100 elements" in r.json()["detail"]
            r = await client.post("/v1/hgemm", content=b"", headers=binary_headers(m=2, n=1001, k=1))
            assert r.status_code == 413 and "b is 1x1001" in r.json()["detail"]
            r = await client.post("/v1/hgemm", content=b"", headers=binary_headers(m=40, n=40, k=1))
            assert r.status_code == 413 and "c is 40x40" in r.json()["detail"]
            r = await client.post("/v1/hgemm", json={"a": {"shape": [2000, 1], "base64": "AAAA"},
                                                     "b": {"data": [[1.0]]}})
            assert r.status_code == 413 and "HGEMM_MAX_ELEMENTS" in r.json()["detail"]
    run(scenario())


def test_bad_requests_do_not_disturb_good_ones_in_the_same_batch(rng):
    """Good and bad requests arrive together; the good ones form a batch and are all right."""
    async def scenario():
        async with serving(max_batch_size=8, max_queue_delay_us=200_000) as (client, _):
            pairs = [(fp16(rng, 5, 6), fp16(rng, 6, 7)) for _ in range(6)]
            good = [client.post("/v1/hgemm", content=a.tobytes() + b.tobytes(), headers=binary_headers(m=5, n=7, k=6))
                    for a, b in pairs]
            bad = [client.post("/v1/hgemm", content=b"\x00" * 10, headers=binary_headers(m=5, n=7, k=6)),
                   client.post("/v1/hgemm", json={"a": {"data": [[1.0]]}, "b": {"data": [[1.0, 2.0]]},
                                                  "b_layout": "col"})]
            answers = await asyncio.gather(*good, *bad)
            for (a, b), r in zip(pairs, answers):
                assert r.status_code == 200
                assert_close(np.frombuffer(r.content, dtype="<f2").reshape(5, 7), reference(a, b, "row"))
            assert [r.status_code for r in answers[len(good):]] == [400, 400]
    run(scenario())


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic c2VjcmV0", "Bearer"])
def test_auth_rejects_missing_or_wrong_tokens(header):
    async def scenario():
        async with serving(api_keys="k1, secret") as (client, _):
            headers = {} if header is None else {"authorization": header}
            for method, path in (("POST", "/v1/hgemm"), ("GET", "/v1/operands"), ("GET", "/v1/kernels"),
                                 ("DELETE", "/v1/operands/op_x")):
                r = await client.request(method, path, headers=headers, json={"a": {"data": A}, "b": {"data": B}})
                assert r.status_code == 401, (method, path, r.text)
                assert "bearer token" in r.json()["detail"] and r.headers["www-authenticate"] == "Bearer"
            ok = await client.post("/v1/hgemm", headers={"authorization": "Bearer secret"},
                                   json={"a": {"data": A}, "b": {"data": B}})
            assert ok.status_code == 200
            assert (await client.get("/health/ready")).status_code == 200  # health and metrics stay open
            assert (await client.get("/metrics")).status_code == 200
    run(scenario())
