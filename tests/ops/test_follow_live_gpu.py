"""tuner.follow against the real service on the GPU (skipped elsewhere): requests of a shape the tables lack run on
cuBLAS (`no_tuned_kernel`); one follow round tunes it over the variants the committed tables run (built already: no
compile) into the service's HGEMM_EXTRA_TABLES and reloads; the same request then runs a tuned choice, still matching
float64."""
import json
import os

import httpx
import numpy as np
import pytest

from tuner.follow import main as follow

from .conftest import PYTHON, Process, free_port

pytestmark = pytest.mark.gpu

M, N, K = 40, 136, 72   # off CUDA-L2's grid: no committed entry


def gemm(url: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, dict]:
    response = httpx.post(f"{url}/v1/hgemm", params={"m": M, "n": N, "k": K, "b_layout": "col", "acc": "f32"},
                          content=a.tobytes() + b.tobytes(), headers={"Content-Type": "application/octet-stream"},
                          timeout=60)
    assert response.status_code == 200, response.text
    return np.frombuffer(response.content, dtype="<f2").reshape(M, N), response.headers


def test_one_follow_round_makes_the_service_serve_a_tuned_choice(tmp_path, capsys):
    tables, state = tmp_path / "tables", tmp_path / "state"
    tables.mkdir()
    port = free_port()
    env = {**os.environ, "HGEMM_BACKEND": "gpu", "HGEMM_HOST": "127.0.0.1", "HGEMM_PORT": str(port),
           "HGEMM_API_KEYS": "", "HGEMM_WORKERS": "1", "HGEMM_EXTRA_TABLES": str(tables)}
    for name in ("HGEMM_SHARED_DIR", "PROMETHEUS_MULTIPROC_DIR"):
        env.pop(name, None)
    proc = Process([PYTHON, "-m", "service"], tmp_path / "service.log", env=env)
    for url in proc.serve(f"http://127.0.0.1:{port}", "/health/ready", 180, "the service on the GPU"):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K)).astype("<f2")
        b = rng.standard_normal((N, K)).astype("<f2")
        expected = a.astype(np.float64) @ b.astype(np.float64).T
        for _ in range(3):
            c, headers = gemm(url, a, b)
            assert headers["X-Fallback"] == "no_tuned_kernel"
        untuned = httpx.get(f"{url}/v1/kernels/untuned", timeout=10).json()["shapes"]
        assert {"m": M, "n": N, "k": K, "b_layout": "col", "acc": "f32", "requests": 3} in untuned

        assert follow(["--service", url, "--tables-dir", str(tables), "--state-dir", str(state), "--once",
                       "--min-requests", "3", "--", "--budget-trials", "6", "--lt-arms", "4",
                       "--variant-set", "tables"]) == 0
        outcome = json.loads(capsys.readouterr().out)
        assert outcome["tuned"] == {"f32/col": [f"{M}_{N}_{K}"]} and "warning" not in outcome
        assert outcome["reload"]["workers"]["serving"] == 1

        c, headers = gemm(url, a, b)
        assert headers["X-Fallback"] == "none", dict(headers)   # a tuned choice (a `cublas` entry included)
        error = np.linalg.norm(c.astype(np.float64) - expected) / np.linalg.norm(expected)
        assert error < 2e-3, (headers["X-Kernel"], error)
        capsys.readouterr()
        assert follow(["--service", url, "--tables-dir", str(tables), "--state-dir", str(state), "--once",
                       "--min-requests", "3"]) == 0   # tuned already: nothing to do
        assert json.loads(capsys.readouterr().out)["tuned"] == {}
