"""`python -m service`: serve the app with uvicorn on HGEMM_HOST:HGEMM_PORT (one process: the resident operands and
the GPU context live in it)."""
import logging

import uvicorn

from .app import create_app
from .settings import Settings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info",
                access_log=False, timeout_graceful_shutdown=max(5, int(settings.request_timeout_s) + 1))


if __name__ == "__main__":
    main()
