"""Fixtures for the operations tests: the real tools (promtool, amtool, prometheus, docker-compose; installed by
scripts/install-ops-tools.sh), free loopback ports, and a real service process on the CPU backend."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (run scripts/install-ops-tools.sh)")
    return path


def run_tool(args: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, OSError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Process:
    """A child process whose output goes to a log file that failures print."""

    def __init__(self, args: list[str], log: Path, env: dict | None = None, cwd: Path = REPO):
        self.log = log
        self.handle = open(log, "wb")
        self.proc = subprocess.Popen(args, stdout=self.handle, stderr=subprocess.STDOUT, env=env, cwd=cwd)

    def check_alive(self) -> None:
        assert self.proc.poll() is None, f"process exited with {self.proc.returncode}:\n{self.log.read_text()[-4000:]}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.handle.close()

    def serve(self, url: str, ready_path: str, timeout: float, what: str):
        """Yield `url` once GET url+ready_path answers 200 (failing early if the process dies); stop it afterwards.
        Meant for `yield from` in a fixture."""
        try:
            def ready():
                self.check_alive()
                return httpx.get(f"{url}{ready_path}", timeout=2).status_code == 200
            wait_until(ready, timeout, what)
            yield url
        finally:
            self.stop()


@pytest.fixture(scope="module", params=[1, 2], ids=["1 worker", "2 workers"])
def service(request, tmp_path_factory):
    """`python -m service` on the CPU backend on a free loopback port; yields its base URL. Once as one process, once
    as two worker processes (what the compose stack runs: metrics summed over processes, docs/service.md)."""
    port = free_port()
    env = {**os.environ, "HGEMM_BACKEND": "cpu", "HGEMM_HOST": "127.0.0.1", "HGEMM_PORT": str(port),
           "HGEMM_API_KEYS": "", "HGEMM_WORKERS": str(request.param)}
    for name in ("HGEMM_SHARED_DIR", "PROMETHEUS_MULTIPROC_DIR"):
        env.pop(name, None)
    proc = Process([PYTHON, "-m", "service"], tmp_path_factory.mktemp("service") / "service.log", env=env)
    yield from proc.serve(f"http://127.0.0.1:{port}", "/health/ready", 90, "the service to become ready")
