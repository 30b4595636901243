"""`python -m tuner.follow`: tune the shapes a running service serves on cuBLAS, and have it serve the result.

  python -m tuner.follow --service http://127.0.0.1:8000 --tables-dir /srv/tables            # every 5 min, forever
  python -m tuner.follow --service … --tables-dir … --once --min-requests 1 -- --budget-trials 8   # one round

The loop the service's own endpoints make possible (docs/dispatch.md, "Tuning the shapes you serve"), run as a
sidecar: each round reads `GET /v1/kernels/untuned` (GEMMs that fell back with `no_tuned_kernel`, counted by request),
takes per accumulator and B layout the most requested shapes with at least --min-requests that its tables do not hold
yet (and that did not fail --max-attempts rounds already), tunes them with `python -m tuner.tune --tables-dir DIR` (a
subprocess: its GPU memory is freed when it ends; the tuner merges into the tables already there and resumes from
--state-dir), then `POST /v1/kernels/tables/reload`. The
service must read DIR: start it with `HGEMM_EXTRA_TABLES=DIR` (the reload's answer names the files it serves; a DIR
missing there is reported). Arguments after `--` go to `tuner.tune` (e.g. `--variant-set wide_pdl_mid --objective
call`). Tuning shares the GPU with serving — run it where P99 has room, or give the tuner another GPU (`--gpus`).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from kernels.tuned_tables import load_tables

ACC_FLAG = {"f32": "fp32", "f16": "fp16"}


class ServiceError(RuntimeError):
    """The service answered with an error, or not at all."""


class Service:
    """The two endpoints the loop needs, over plain HTTP (no client library: the sidecar runs where the tuner runs)."""

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 30.0):
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout_s = timeout_s

    def _call(self, method: str, path: str) -> dict:
        request = urllib.request.Request(self.url + path, method=method, headers=self.headers,
                                         data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            raise ServiceError(f"{method} {path}: HTTP {error.code}: {detail}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise ServiceError(f"{method} {path}: {error}") from None

    def untuned(self) -> list[dict]:
        return self._call("GET", "/v1/kernels/untuned")["shapes"]

    def reload(self) -> dict:
        return self._call("POST", "/v1/kernels/tables/reload")


def held_shapes(tables_dir: Path) -> set[tuple]:
    """(m, n, k, b_layout, acc) of every entry the tables in tables_dir already hold."""
    if not tables_dir.is_dir():
        return set()
    return {(m, n, k, layout, acc) for acc, table in load_tables("sm90", tables_dir).items()
            for (m, n, k, layout) in table.entries}


def attempt_key(acc: str, b_layout: str, mnk: str) -> str:
    return f"{acc}/{b_layout}/{mnk}"


def shape_of(key: str) -> tuple:
    """attempt_key's inverse, as held_shapes spells a shape: (m, n, k, b_layout, acc)."""
    acc, b_layout, mnk = key.split("/")
    return (*map(int, mnk.split("_")), b_layout, acc)


def pick(untuned: list[dict], held: set[tuple], min_requests: int, max_shapes: int,
         given_up: set[str] = frozenset()) -> dict[tuple, list[str]]:
    """{(acc, b_layout): [M_N_K, …]}: per group the most requested shapes (the service's order) with at least
    min_requests that the tables do not hold and that were not given up on, at most max_shapes of them."""
    groups: dict[tuple, list[str]] = {}
    for s in untuned:
        key = (s["m"], s["n"], s["k"], s["b_layout"], s["acc"])
        mnk = f"{s['m']}_{s['n']}_{s['k']}"
        if (s["requests"] < min_requests or key in held or s["acc"] not in ACC_FLAG
                or attempt_key(s["acc"], s["b_layout"], mnk) in given_up):
            continue
        group = groups.setdefault((s["acc"], s["b_layout"]), [])
        if len(group) < max_shapes:
            group.append(mnk)
    return groups


def tune_command(acc: str, b_layout: str, grid: Path, tables_dir: Path, state_dir: Path, env: str,
                 extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "tuner.tune", "--grid", str(grid), "--acc", ACC_FLAG[acc], "--b-layout", b_layout,
            "--env", env, "--tables-dir", str(tables_dir), "--state-dir", str(state_dir), *extra]


def one_round(service: Service, args, log=print) -> dict:
    """Pick, tune, reload. Returns what happened (also what --once prints)."""
    tables_dir, state_dir = Path(args.tables_dir), Path(args.state_dir)
    # shapes a round tuned that still are not in the tables (their job failed): retried up to --max-attempts rounds
    attempts_path = state_dir / "follow_attempts.json"
    attempts = json.loads(attempts_path.read_text()) if attempts_path.is_file() else {}
    given_up = {key for key, n in attempts.items() if n >= args.max_attempts}
    groups = pick(service.untuned(), held_shapes(tables_dir), args.min_requests, args.max_shapes, given_up)
    outcome: dict = {"tuned": {}, "failed": {}, "reload": None}
    for (acc, b_layout), shapes in sorted(groups.items()):
        state_dir.mkdir(parents=True, exist_ok=True)
        grid = state_dir / f"follow_{acc}_{b_layout}.txt"
        grid.write_text("".join(f"{s}\n" for s in shapes))
        command = tune_command(acc, b_layout, grid, tables_dir, state_dir, args.env, args.tuner_args)
        log(f"tuning {len(shapes)} {acc}/{b_layout} shapes: {' '.join(command)}")
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=args.tune_timeout_s)
            failed = proc.returncode != 0 and f"exit status {proc.returncode}: {proc.stderr[-2000:]}"
        except subprocess.TimeoutExpired:
            failed = f"no result within {args.tune_timeout_s:.0f} s"
        if failed:
            outcome["failed"][f"{acc}/{b_layout}"] = failed
            log(f"tuner failed for {acc}/{b_layout}: {failed}")
        else:
            outcome["tuned"][f"{acc}/{b_layout}"] = shapes
        for key in (attempt_key(acc, b_layout, mnk) for mnk in shapes):
            attempts[key] = attempts.get(key, 0) + 1
    if groups:
        now_held = held_shapes(tables_dir)
        attempts = {key: n for key, n in attempts.items() if shape_of(key) not in now_held}
        attempts_path.write_text(json.dumps(attempts, indent=1))
        missing = sorted(attempts)
        if missing:
            outcome["not_in_tables"] = missing
    if outcome["tuned"]:
        answer = service.reload()
        outcome["reload"] = answer
        sources = " ".join(t.get("source", "") for t in answer.get("tables", {}).values())
        if str(tables_dir) not in sources and str(tables_dir.resolve()) not in sources:
            outcome["warning"] = (f"the service does not serve {tables_dir}: start it with "
                                  f"HGEMM_EXTRA_TABLES={tables_dir}")
            log(outcome["warning"])
    return outcome


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tuner.follow", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--service", default="http://127.0.0.1:8000")
    p.add_argument("--api-key", default=None, help="a key of the service's HGEMM_API_KEYS, if it has any")
    p.add_argument("--tables-dir", required=True, help="where the tuner writes; the service's HGEMM_EXTRA_TABLES")
    p.add_argument("--state-dir", default="results/follow", help="the tuner's resumable state and the round's grids")
    p.add_argument("--min-requests", type=int, default=100, help="tune a shape once it was requested this often")
    p.add_argument("--max-shapes", type=int, default=32, help="per accumulator and layout, per round")
    p.add_argument("--interval", type=float, default=300.0, help="seconds between rounds")
    p.add_argument("--once", action="store_true", help="one round, print what happened, exit")
    p.add_argument("--env", choices=("gpu", "synthetic"), default="gpu")
    p.add_argument("--tune-timeout-s", type=float, default=3600.0)
    p.add_argument("--max-attempts", type=int, default=2,
                   help="rounds that may try a shape the tables still lack afterwards (a failing job) before it is "
                        "left alone")
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = build_parser().parse_args(argv[:split])
    args.tuner_args = argv[split + 1:]
    if args.min_requests < 1 or args.max_shapes < 1 or args.max_attempts < 1 or args.interval <= 0:
        raise SystemExit("--min-requests, --max-shapes and --max-attempts must be >= 1, --interval > 0")
    service = Service(args.service, args.api_key)
    while True:
        try:
            outcome = one_round(service, args, log=lambda line: print(line, file=sys.stderr, flush=True))
        except ServiceError as error:
            if args.once:
                print(f"tuner.follow: {error}", file=sys.stderr)
                return 1
            print(f"tuner.follow: {error} (next round in {args.interval:.0f} s)", file=sys.stderr, flush=True)
        else:
            if args.once:
                print(json.dumps(outcome, indent=1))
                return 1 if outcome["failed"] else 0
        time.sleep(args.interval)


if __name__ == "__main__":
    raise SystemExit(main())
