"""The real thing: `python -m service` on a free loopback port, driven by the curl examples of docs/service.md (each
`bash` block runs, its output must equal the `text` block after it), then a clean SIGTERM shutdown."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from service_helpers import assert_close, fp16, reference, wait_ready

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "service.md"


def doc_examples() -> list[tuple[str, str | None]]:
    """(bash block, the text block right after it or None)."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", DOC.read_text(), flags=re.S)
    examples = []
    for index, (kind, body) in enumerate(blocks):
        if kind == "bash":
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            examples.append((body, following[1] if following and following[0] == "text" else None))
    return examples


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env = {**os.environ, "HGEMM_HOST": "127.0.0.1", "HGEMM_PORT": str(port), "HGEMM_BACKEND": "cpu",
           "HGEMM_API_KEYS": "", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "service"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(process, url, 120)
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_docs_curl_examples_work(server, tmp_path):
    _, url = server
    examples = doc_examples()
    assert len(examples) >= 6
    for script, expected in examples:
        script = script.replace("localhost:8000", url.removeprefix("http://"))
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, env={**os.environ, "PATH": f"{Path(sys.executable).parent}:"
                                                                                  f"{os.environ['PATH']}"})
        assert done.returncode == 0, (script, done.stdout, done.stderr)
        if expected is not None:
            assert done.stdout.strip() == expected.strip(), script


def test_real_server_matches_float64_then_shuts_down_cleanly(server, tmp_path):
    process, url = server
    rng = np.random.default_rng()
    with httpx.Client(base_url=url, timeout=30) as client:
        for layout in ("row", "col"):
            a = fp16(rng, 64, 256)
            b = fp16(rng, 256, 96) if layout == "row" else fp16(rng, 96, 256)
            r = client.post("/v1/hgemm", params={"m": 64, "n": 96, "k": 256, "b_layout": layout},
                            content=a.tobytes() + b.tobytes(), headers={"content-type": "application/octet-stream"})
            assert r.status_code == 200, r.text
            assert_close(np.frombuffer(r.content, dtype="<f2").reshape(64, 96), reference(a, b, layout))
        assert "hgemm_ready 1.0" in client.get("/metrics").text
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    # uvicorn re-raises the signal after a graceful shutdown, so -SIGTERM is a clean exit too
    assert process.returncode in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output and "Traceback" not in output, output


def test_gil_switch_interval_setting_reaches_python_before_serving(monkeypatch):
    """Set when the app starts (so in every worker process), not by the launcher."""
    from service_helpers import run, serving
    from service.settings import Settings

    monkeypatch.setenv("HGEMM_GIL_SWITCH_INTERVAL_US", "250")
    assert Settings().gil_switch_interval_us == 250
    before = sys.getswitchinterval()
    seen = []

    async def scenario():
        async with serving(gil_switch_interval_us=250):
            seen.append(sys.getswitchinterval())

    try:
        run(scenario())
        assert seen == [pytest.approx(250e-6)]
    finally:
        sys.setswitchinterval(before)
    monkeypatch.setenv("HGEMM_GIL_SWITCH_INTERVAL_US", "-1")
    with pytest.raises(ValueError):
        Settings()


def test_one_worker_serves_the_app_object_and_several_a_factory_with_a_shared_dir(monkeypatch, tmp_path):
    import service.__main__ as entry

    served = []
    monkeypatch.setattr(entry.uvicorn, "run", lambda app, **kwargs: served.append((app, kwargs)))
    monkeypatch.delenv("HGEMM_SHARED_DIR", raising=False)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    monkeypatch.setenv("HGEMM_BACKEND", "cpu")
    entry.main()
    app, kwargs = served.pop()
    assert not isinstance(app, str) and "workers" not in kwargs and "PROMETHEUS_MULTIPROC_DIR" not in os.environ

    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "counter_1.db").write_bytes(b"stale")
    monkeypatch.setenv("HGEMM_WORKERS", "3")
    monkeypatch.setenv("HGEMM_SHARED_DIR", str(tmp_path))
    entry.main()
    app, kwargs = served.pop()
    assert (app, kwargs["workers"], kwargs["factory"]) == ("service.app:create_app", 3, True)
    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "metrics")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics", "operands", "ready", "tables", "untuned"]
    assert not any((tmp_path / "metrics").iterdir())  # an earlier server's counts are not summed in

    monkeypatch.delenv("HGEMM_SHARED_DIR")
    monkeypatch.setattr(entry.uvicorn, "run", lambda app, **kwargs: served.append(Path(os.environ["HGEMM_SHARED_DIR"])))
    entry.main()
    made = served.pop()
    assert made != tmp_path and made.name.startswith("hgemm-workers-") and not made.exists()  # its own: removed
