"""The shapes worth tuning next: what the service ran on the cuBLAS fallback for want of a tuned entry, counted per
request, listed by GET /v1/kernels/untuned (JSON, or the M_N_K grid `tuner.tune --grid` reads)."""
from service.backends import CpuBackend
from service.jobs import Selection
from service.untuned import UntunedShapes
from service_helpers import fp16, run, serving

TUNED = (64, 96, 48)
ELSEWHERE = (32, 64, 96)   # tuned to a cuBLASLt algorithm this GPU's list lacks: worth tuning here too


class TablesBackend(CpuBackend):
    """The CPU backend, answering like the GPU one whose tables hold only TUNED and ELSEWHERE."""

    def select(self, m, n, k, b_layout, acc):
        if (m, n, k) == TUNED:
            return Selection("sm90_tuned", None)
        return Selection("cublas", "tuned_elsewhere" if (m, n, k) == ELSEWHERE else "no_tuned_kernel")


def test_counts_rank_filter_and_cap():
    shapes = UntunedShapes(capacity=3)
    for key, times in (((8, 8, 8, "row", "f32"), 1), ((4, 4, 4, "col", "f16"), 3), ((2, 2, 2, "row", "f32"), 1),
                       ((9, 9, 9, "row", "f32"), 2)):  # the fourth shape finds the table full
        for _ in range(times):
            shapes.add(*key)
    assert [(s["m"], s["requests"]) for s in shapes.top()] == [(4, 3), (2, 1), (8, 1)]  # ties: smaller first
    assert (len(shapes), shapes.overflow) == (3, 2)
    assert [s["m"] for s in shapes.top(acc="f32")] == [2, 8] and shapes.top(b_layout="col", limit=5)[0]["m"] == 4
    assert shapes.top(limit=1) == [{"m": 4, "n": 4, "k": 4, "b_layout": "col", "acc": "f16", "requests": 3}]
    assert shapes.grid("f32", "row") == "2_2_2\n8_8_8\n" and shapes.grid("f16", "row") == ""


def test_the_service_lists_the_shapes_it_served_untuned_and_their_grid(rng):
    async def scenario():
        async with serving(TablesBackend()) as (client, _):
            calls = [((3, 5, 7), "row", "f32")] * 3 + [((17, 33, 129), "col", "f16")] + [(TUNED, "row", "f32")] * 2 \
                + [(ELSEWHERE, "row", "f32")] * 2
            for (m, n, k), layout, acc in calls:
                b = fp16(rng, k, n) if layout == "row" else fp16(rng, n, k)
                r = await client.post("/v1/hgemm", json={"a": {"data": fp16(rng, m, k).tolist()},
                                                         "b": {"data": b.tolist()}, "b_layout": layout, "acc": acc})
                assert r.status_code == 200, r.text
            r = await client.get("/v1/kernels/untuned")
            assert r.status_code == 200
            body = r.json()
            assert body["shapes"] == [{"m": 3, "n": 5, "k": 7, "b_layout": "row", "acc": "f32", "requests": 3},
                                      {"m": 32, "n": 64, "k": 96, "b_layout": "row", "acc": "f32", "requests": 2},
                                      {"m": 17, "n": 33, "k": 129, "b_layout": "col", "acc": "f16", "requests": 1}]
            assert (body["tracked"], body["overflow_requests"]) == (3, 0)
            r = await client.get("/v1/kernels/untuned", params={"acc": "f16", "b_layout": "col", "format": "grid"})
            assert (r.status_code, r.headers["content-type"].split(";")[0], r.text) == (200, "text/plain",
                                                                                         "17_33_129\n")
            assert (await client.get("/v1/kernels/untuned", params={"acc": "f32", "limit": "1"})).json()["shapes"][0][
                "requests"] == 3
            for bad in ({"format": "grid"}, {"acc": "f64"}, {"b_layout": "diag"}, {"limit": "0"}, {"limit": "x"},
                        {"format": "csv"}, {"sort": "m"}):
                r = await client.get("/v1/kernels/untuned", params=bad)
                assert r.status_code == 422 and r.json()["detail"], (bad, r.text)
    run(scenario())
