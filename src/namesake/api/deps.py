"""FastAPI dependencies: the services of this app, and bearer-key auth with the key's tenant scope."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from namesake.app import Services
from namesake.core import ForbiddenError, Scope, UnauthorizedError
from namesake.domain import ID_DESCRIPTION, ID_PATTERN


def get_services(request: Request) -> Services:
    """The services the lifespan opened for this app."""
    return request.app.state.services  # type: ignore[no-any-return]


_bearer = HTTPBearer(auto_error=False)


def require_key(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Scope:
    """The key's scope: 401 without a bearer key, 403 with a wrong one; admin when no key is configured (local use)."""
    keys: list[tuple[str, Scope]] = request.app.state.key_scopes
    scope = Scope()
    if keys:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise UnauthorizedError("missing bearer key: send Authorization: Bearer <key>", field="Authorization")
        # every key compared, so the time taken does not tell which one nearly matched
        matches = [s for k, s in keys if hmac.compare_digest(credentials.credentials.encode(), k.encode())]
        if not matches:
            raise ForbiddenError("this key is not allowed", field="Authorization")
        scope = matches[0]
    request.state.scope = scope  # error messages are written in the client's own ids
    return scope


def require_admin(scope: Annotated[Scope, Depends(require_key)]) -> Scope:
    """403 for a tenant key: jobs and metrics span every tenant."""
    if not scope.is_admin:
        raise ForbiddenError("this route needs an admin key", field="Authorization")
    return scope


ServicesDep = Annotated[Services, Depends(get_services)]
ScopeDep = Annotated[Scope, Depends(require_key)]
# a transcript id in a path: the pattern of the identifiers a body carries (and room for a tenant prefix)
TranscriptId = Path(pattern=ID_PATTERN, max_length=233, description=ID_DESCRIPTION)
