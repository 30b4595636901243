"""`python -m service`: serve the app with uvicorn on HGEMM_HOST:HGEMM_PORT. One process by default (the resident
operands and the GPU context live in it); HGEMM_WORKERS=N starts N worker processes on the one port, sharing operands,
metrics and untuned-shape counts through HGEMM_SHARED_DIR (service/workers.py)."""
import logging
import shutil

import uvicorn

from .settings import Settings
from .workers import prepare


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    # loop/http "auto": uvloop and httptools when installed (they are: uvicorn[standard]); no access log and no
    # proxy-header rewriting on the hot path (the service never reads the client address)
    options = dict(host=settings.host, port=settings.port, log_level="info", loop="auto", http="auto",
                   access_log=False, proxy_headers=False,
                   timeout_graceful_shutdown=max(5, int(settings.request_timeout_s) + 1))
    if settings.workers > 1:
        shared = prepare(settings.shared_dir)  # before the workers start: they inherit its environment
        logging.getLogger(__name__).info("%d workers sharing %s", settings.workers, shared)
        try:
            uvicorn.run("service.app:create_app", factory=True, workers=settings.workers, **options)
        finally:
            if not settings.shared_dir:  # ours: B copies and metric files of a server that is gone
                shutil.rmtree(shared, ignore_errors=True)
    else:
        from .app import create_app
        uvicorn.run(create_app(settings), **options)


if __name__ == "__main__":
    main()
