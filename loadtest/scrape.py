"""Scrape the service's /metrics every INTERVAL seconds during a load run, so its own histograms can be split by ramp
step afterwards (`python -m loadtest.server_time --steps`):

    python -m loadtest.scrape http://127.0.0.1:8000/metrics OUT_FILE [--interval 0.5]

OUT_FILE gets one block per scrape: a `# scrape <unix time>` line, then the service histograms of that moment (the
other families are dropped to keep the file small). Runs until it is terminated; a failed scrape (the service is not
up yet, or has no /metrics, like the naive baseline) is skipped."""
from __future__ import annotations

import argparse
import signal
import sys
import time
import urllib.request

# the families loadtest.server_time reads (one place: that module imports them from here)
FAMILIES = ("hgemm_request_duration_seconds", "hgemm_queue_wait_seconds", "hgemm_compute_seconds",
            "hgemm_batch_phase_seconds", "hgemm_batch_size")
MARK = "# scrape "


def keep(text: str) -> str:
    """The lines of FAMILIES (samples and their # TYPE / # HELP lines)."""
    out = []
    for line in text.splitlines():
        name = line.split(" ", 3)[2] if line.startswith("# ") and line.count(" ") >= 2 else line
        if name.startswith(FAMILIES):
            out.append(line)
    return "\n".join(out)


def split_scrapes(text: str) -> list[tuple[float, str]]:
    """[(unix time, metrics text)] from an OUT_FILE, in file order."""
    scrapes = []
    for block in text.split(MARK)[1:]:
        stamp, _, body = block.partition("\n")
        scrapes.append((float(stamp), body))
    return scrapes


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m loadtest.scrape", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("url")
    p.add_argument("out")
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=2.0)
    args = p.parse_args(argv)
    if args.interval <= 0:
        p.error("--interval must be > 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.out, "a") as out:
        while True:
            started = time.time()
            try:
                with urllib.request.urlopen(args.url, timeout=args.timeout) as response:
                    body = keep(response.read().decode())
                out.write(f"{MARK}{started:.3f}\n{body}\n")
                out.flush()
            except OSError:
                pass  # not up yet, or no /metrics here
            time.sleep(max(0.0, args.interval - (time.time() - started)))


if __name__ == "__main__":
    sys.exit(main())
