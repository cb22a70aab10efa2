"""FastAPI dependencies: the services of this app, and bearer-key auth."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from namesake.errors import ForbiddenError, UnauthorizedError
from namesake.runtime import Runtime
from namesake.services import Services


def get_services(request: Request) -> Services:
    """The services the lifespan opened for this app."""
    return request.app.state.services  # type: ignore[no-any-return]


def get_runtime(request: Request) -> Runtime:
    """The runtime the lifespan opened for this app."""
    return get_services(request).runtime


_bearer = HTTPBearer(auto_error=False)


def require_key(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """401 without a bearer key, 403 with a wrong one; open only when no key is configured (local use)."""
    keys: list[str] = request.app.state.settings.namesake_api_keys
    if not keys:
        return
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise UnauthorizedError("missing bearer key: send Authorization: Bearer <key>", field="Authorization")
    if not any(hmac.compare_digest(credentials.credentials, k) for k in keys):
        raise ForbiddenError("this key is not allowed", field="Authorization")


ServicesDep = Annotated[Services, Depends(get_services)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
