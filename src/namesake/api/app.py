"""create_app(settings): the FastAPI application with its lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from namesake import __version__
from namesake.api.routes import health
from namesake.runtime import Runtime, open_runtime
from namesake.settings import Settings


def create_app(settings: Settings, runtime: Runtime | None = None) -> FastAPI:
    """Build the app; the lifespan opens the stores unless a runtime is handed in (tests)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        app.state.runtime = runtime or open_runtime(settings)
        try:
            yield
        finally:
            if owned:
                app.state.runtime.close()

    app = FastAPI(title="namesake", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    app.include_router(health.router)
    return app
