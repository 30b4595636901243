"""Saturation throughput with the batcher against max_batch_size=1 (a benchmark, not a test).

For each batch size, start `python -m service` on a free loopback port, register a resident B, then drive
`/v1/hgemm` with binary requests from closed-loop clients (client processes x connections each) for a fixed time.
Report QPS, latency percentiles, the mean batch size the server formed (from /metrics), and the server's CPU time per
request (user+system of the server process, all its threads, from /proc/<pid>/stat): the cost of the Python/HTTP path,
visible even where the clients and the server share a few cores.

    python -m service.bench_batching                      # 64x4096x64, B resident (N×K), auto backend
    python -m service.bench_batching --backend cpu --m 8 --n 256 --k 256 --seconds 5
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(batch_size: int, args) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "HGEMM_PORT": str(port), "HGEMM_HOST": "127.0.0.1", "HGEMM_BACKEND": args.backend,
           "HGEMM_MAX_BATCH_SIZE": str(batch_size), "HGEMM_MAX_QUEUE_DELAY_US": str(args.delay_us),
           "HGEMM_QUEUE_CAPACITY": str(max(512, 4 * args.clients * args.procs)), "HGEMM_API_KEYS": "",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    log_path = Path(tempfile.gettempdir()) / f"bench_batching_server_{port}.log"
    log = open(log_path, "wb")
    process = subprocess.Popen([sys.executable, "-m", "service"], env=env, cwd=ROOT, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the server exited during startup; its log ({log_path}) ends:\n{tail}")
        try:
            if httpx.get(url + "/health/ready", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server never became ready")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all threads (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def closed_loop(host: str, port: int, request: bytes, connections: int, seconds: float) -> tuple[list[float], int]:
    """Keep `connections` keep-alive connections busy, one request in flight each, for `seconds`.
    A minimal HTTP/1.1 client on raw sockets: an async httpx client tops out at a few hundred requests per second
    per process, below what the service can take."""
    selector = selectors.DefaultSelector()
    for _ in range(connections):
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        selector.register(sock, selectors.EVENT_READ, {"buffer": b"", "sent": time.perf_counter()})
    latencies, errors = [], 0
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        for key, _ in selector.select(timeout=1):
            sock, state = key.fileobj, key.data
            state["buffer"] += sock.recv(1 << 22)
            head, sep, rest = state["buffer"].partition(b"\r\n\r\n")
            if not sep:
                continue
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            if len(rest) < length:
                continue
            now = time.perf_counter()
            if head.startswith(b"HTTP/1.1 200"):
                latencies.append(now - state["sent"])
            else:
                errors += 1
            state["buffer"], state["sent"] = rest[length:], now
            sock.sendall(request)
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    return latencies, errors


def client_process(host, port, request, connections, seconds, queue):
    queue.put(closed_loop(host, port, request, connections, seconds))


def batch_stats(url: str) -> float:
    values = {}
    for family in text_string_to_metric_families(httpx.get(url + "/metrics").text):
        for s in family.samples:
            values[s.name] = s.value
    count = values.get("hgemm_batch_size_count", 0)
    return values.get("hgemm_batch_size_sum", 0) / count if count else 0.0


def measure(batch_size: int, args) -> dict:
    process, url = start_server(batch_size, args)
    try:
        rng = np.random.default_rng(0)
        w = rng.uniform(-1, 1, (args.n, args.k)).astype("<f2")  # b_layout=col: N×K
        operand = httpx.post(f"{url}/v1/operands?k={args.k}&n={args.n}&b_layout=col", content=w.tobytes(),
                             headers={"content-type": "application/octet-stream"}).json()["id"]
        body = rng.uniform(-1, 1, (args.m, args.k)).astype("<f2").tobytes()
        request = (f"POST /v1/hgemm?m={args.m}&operand={operand} HTTP/1.1\r\nHost: bench\r\n"
                   f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        host, port = url.removeprefix("http://").split(":")
        closed_loop(host, int(port), request, args.clients, min(2.0, args.seconds))  # warm up
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        workers = [context.Process(target=client_process, args=(host, int(port), request, args.clients, args.seconds,
                                                                 queue)) for _ in range(args.procs)]
        for worker in workers:
            worker.start()
        cpu_before = cpu_seconds(process.pid)  # the clients connect and warm their sockets first: a small overcount
        latencies, errors = [], 0
        for _ in workers:
            lat, err = queue.get()
            latencies += lat
            errors += err
        cpu_used = cpu_seconds(process.pid) - cpu_before
        for worker in workers:
            worker.join()
        lat = np.array(latencies) * 1e3
        return {"batch": batch_size, "qps": len(lat) / args.seconds, "p50_ms": np.percentile(lat, 50),
                "p99_ms": np.percentile(lat, 99), "errors": errors, "mean_batch": batch_stats(url),
                "cpu_us": cpu_used / max(1, len(lat) + errors) * 1e6}
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--backend", default="auto", choices=["auto", "gpu", "cpu"])
    parser.add_argument("--batch-sizes", default="1,8", help="comma list; 1 = no batching")
    parser.add_argument("--delay-us", type=int, default=500)
    parser.add_argument("--clients", type=int, default=32, help="connections per client process")
    parser.add_argument("--procs", type=int, default=1, help="client processes")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    print(f"shape m={args.m} n={args.n} k={args.k} (B resident, col), backend={args.backend}, "
          f"{args.procs}x{args.clients} closed-loop clients, {args.seconds:g} s each")
    print(f"{'max_batch':>9} {'QPS':>9} {'p50 ms':>8} {'p99 ms':>8} {'mean batch':>10} {'errors':>6} {'srv CPU µs/req':>14}")
    for batch_size in (int(x) for x in args.batch_sizes.split(",")):
        r = measure(batch_size, args)
        print(f"{r['batch']:>9} {r['qps']:>9.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['mean_batch']:>10.2f} "
              f"{r['errors']:>6} {r['cpu_us']:>14.0f}")


if __name__ == "__main__":
    main()
