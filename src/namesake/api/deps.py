"""FastAPI dependency aliases: routes ask for what they need by type."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from namesake.runtime import Runtime


def get_runtime(request: Request) -> Runtime:
    """The runtime the lifespan opened for this app."""
    return request.app.state.runtime  # type: ignore[no-any-return]


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
