"""The HGEMM microservice: `create_app()` builds the FastAPI app; `python -m service` serves it with uvicorn."""
from .app import create_app
from .settings import Settings

__all__ = ["create_app", "Settings"]
