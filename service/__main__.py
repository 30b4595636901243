"""`python -m service`: serve the app with uvicorn on HGEMM_HOST:HGEMM_PORT (one process: the resident operands and
the GPU context live in it)."""
import logging
import sys

import uvicorn

from .app import create_app
from .settings import Settings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    if settings.gil_switch_interval_us:
        sys.setswitchinterval(settings.gil_switch_interval_us / 1e6)
    # loop/http "auto": uvloop and httptools when installed (they are: uvicorn[standard]); no access log and no
    # proxy-header rewriting on the hot path (the service never reads the client address)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info", loop="auto",
                http="auto", access_log=False, proxy_headers=False,
                timeout_graceful_shutdown=max(5, int(settings.request_timeout_s) + 1))


if __name__ == "__main__":
    main()
