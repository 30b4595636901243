"""The Locust users' HTTP client reads a response in large blocks: with geventhttpclient's 4 KiB default a 512 KiB C
costs the generator ~0.7 ms more per response (loadtest/locustfile.py), which Locust would report as service latency.
Checked in a subprocess: importing Locust monkey-patches the process (gevent)."""
from __future__ import annotations

import subprocess

from .conftest import PYTHON, REPO

CHECK = """
import loadtest.locustfile as lf
from locust.env import Environment
for cls in (lf.BinaryUser, lf.ResidentUser, lf.MixedLLMUser, lf.SmallJsonUser):
    cls.host = "http://127.0.0.1:9"
    user = cls(Environment(user_classes=[cls]))
    client = user.client.client.clientpool.get_client("http://127.0.0.1:9/")
    print(cls.__name__, client.block_size)
print("want", lf.RESPONSE_BLOCK_BYTES)
"""


def test_every_scenario_reads_responses_in_large_blocks():
    done = subprocess.run([PYTHON, "-c", CHECK], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split() for line in done.stdout.splitlines())
    want = int(lines.pop("want"))
    assert want >= 64 * 1024
    assert lines == {name: str(want) for name in ("BinaryUser", "ResidentUser", "MixedLLMUser", "SmallJsonUser")}
