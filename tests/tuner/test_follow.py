"""tuner.follow against a stub service on loopback: the shapes it picks, a real (synthetic) tuning run into the tables
directory, the reload, and a second round that finds nothing left to do."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kernels.tuned_tables import load_tables
from tuner.follow import main, pick

UNTUNED = [  # the service's order: most requested first
    {"m": 96, "n": 320, "k": 192, "b_layout": "col", "acc": "f32", "requests": 900},
    {"m": 200, "n": 64, "k": 64, "b_layout": "col", "acc": "f32", "requests": 500},
    {"m": 48, "n": 256, "k": 128, "b_layout": "row", "acc": "f16", "requests": 300},
    {"m": 16, "n": 16, "k": 16, "b_layout": "col", "acc": "f32", "requests": 3},   # too rare
]


class StubService:
    """GET /v1/kernels/untuned and POST /v1/kernels/tables/reload, as the service answers them."""

    def __init__(self, tables_dir, reload_status=200, key=None):
        self.reloads, self.auth = 0, []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                stub.auth.append(self.headers.get("Authorization"))
                if self.path == "/v1/kernels/untuned":
                    return self.reply(200, {"shapes": UNTUNED, "tracked": 4, "capacity": 4096})
                self.reply(404, {"error": "not found"})

            def do_POST(self):
                if self.path != "/v1/kernels/tables/reload":
                    return self.reply(404, {"error": "not found"})
                if reload_status != 200:
                    return self.reply(reload_status, {"error": "tables not reloaded: the cpu backend serves none"})
                stub.reloads += 1
                self.reply(200, {"tables": {"f32": {"entries": 1002, "source": f"kernels/tables + {tables_dir}"}},
                                 "generation": stub.reloads, "workers": {"serving": 1, "of": 1, "failed": []}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "tables", tmp_path / "state"


def test_pick_takes_frequent_shapes_the_tables_lack_grouped_and_capped():
    held = {(200, 64, 64, "col", "f32")}
    assert pick(UNTUNED, held, min_requests=100, max_shapes=8) == {("f32", "col"): ["96_320_192"],
                                                                    ("f16", "row"): ["48_256_128"]}
    assert pick(UNTUNED, set(), min_requests=1, max_shapes=1) == {("f32", "col"): ["96_320_192"],
                                                                  ("f16", "row"): ["48_256_128"]}


def test_a_round_tunes_into_the_tables_dir_reloads_and_the_next_round_has_nothing_to_do(dirs, capsys):
    tables, state = dirs
    stub = StubService(tables)
    argv = ["--service", stub.url, "--api-key", "k1", "--tables-dir", str(tables), "--state-dir", str(state),
            "--once", "--min-requests", "100", "--env", "synthetic", "--", "--budget-trials", "4",
            "--variant-set", "smoke"]
    try:
        assert main(argv) == 0
        first = json.loads(capsys.readouterr().out)
        assert first["tuned"] == {"f16/row": ["48_256_128"], "f32/col": ["96_320_192", "200_64_64"]}
        assert first["reload"]["generation"] == 1 and "warning" not in first and stub.reloads == 1
        served = load_tables("sm90", tables)
        assert set(served["f32"].entries) == {(96, 320, 192, "col"), (200, 64, 64, "col")}
        assert set(served["f16"].entries) == {(48, 256, 128, "row")}
        assert main(argv) == 0
        second = json.loads(capsys.readouterr().out)
        assert second == {"tuned": {}, "failed": {}, "reload": None} and stub.reloads == 1
        assert stub.auth and set(stub.auth) == {"Bearer k1"}
    finally:
        stub.close()


def test_a_refused_reload_or_an_unreachable_service_is_a_clear_error(dirs, capsys):
    tables, state = dirs
    stub = StubService(tables, reload_status=409)
    base = ["--tables-dir", str(tables), "--state-dir", str(state), "--once", "--env", "synthetic", "--",
            "--budget-trials", "2", "--variant-set", "smoke"]
    try:
        assert main(["--service", stub.url, "--min-requests", "400", *base]) == 1
        assert "HTTP 409" in capsys.readouterr().err
    finally:
        stub.close()
    assert main(["--service", stub.url, *base]) == 1   # the stub is gone: connection refused
    assert "GET /v1/kernels/untuned" in capsys.readouterr().err


def test_a_failing_tuner_is_reported_and_its_shapes_left_alone_after_max_attempts(dirs, capsys):
    tables, state = dirs
    stub = StubService(tables)
    argv = ["--service", stub.url, "--tables-dir", str(tables), "--state-dir", str(state), "--once",
            "--min-requests", "400", "--max-attempts", "1", "--env", "synthetic", "--", "--lt-arms", "99"]
    try:
        assert main(argv) == 1   # tuner.tune refuses --lt-arms 99: nothing tuned, no reload
        first = json.loads(capsys.readouterr().out)
        assert set(first["failed"]) == {"f32/col"} and "--lt-arms" in first["failed"]["f32/col"]
        assert first["not_in_tables"] == ["f32/col/200_64_64", "f32/col/96_320_192"] and stub.reloads == 0
        assert main(argv) == 0   # given up on both: nothing left to try
        assert json.loads(capsys.readouterr().out) == {"tuned": {}, "failed": {}, "reload": None}
    finally:
        stub.close()
