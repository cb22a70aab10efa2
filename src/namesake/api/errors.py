"""Map namesake errors and request validation errors to JSON error bodies with the right status."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from namesake.core import (
    BusyError,
    CancelledWork,
    ConflictError,
    ForbiddenError,
    GoneError,
    InputTooLargeError,
    InvalidInputError,
    NamesakeError,
    NotFoundError,
    Scope,
    StoreError,
    UnauthorizedError,
    WorkerError,
)

log = logging.getLogger(__name__)
STATUS: list[tuple[type[NamesakeError], int]] = [
    (UnauthorizedError, 401),
    (ForbiddenError, 403),
    (InputTooLargeError, 413),
    (InvalidInputError, 422),
    (NotFoundError, 404),
    (GoneError, 410),
    (ConflictError, 409),
    (StoreError, 503),
    (WorkerError, 503),  # the process running the stages ended (killed, out of memory): a new one runs a retry
    (CancelledWork, 499),  # nobody reads it: the client left (nginx's code for that, in the access log)
]


# What a client is told when a store fails: the request id in the response header finds the details.
PUBLIC_MESSAGES = {503: "a store is unavailable; retry later (the X-Request-ID header locates the details in the log)"}
WORKER_MESSAGE = "the process analysing it ended; retry (the X-Request-ID header locates the details in the log)"
HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 400: "BAD_REQUEST", 413: "TOO_LARGE"}


# What pydantic says of a body that is not a JSON object (null, an array, a string).
NOT_AN_OBJECT = ("model_attributes_type", "dict_type", "model_type", "dataclass_type", "missing")


def error_body(code: str, message: str, field: str | None = None) -> dict[str, object]:
    """The JSON every error answers with."""
    return {"error": {"code": code, "message": message, "field": field}}


def status_of(exc: NamesakeError) -> int:
    """HTTP status for a namesake error (500 for the unexpected ones)."""
    return next((status for kind, status in STATUS if isinstance(exc, kind)), 500)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app answers at the request's path (asked of the routes themselves)."""
    allowed = []
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return allowed


def install(app: FastAPI) -> None:
    """Register the handlers on the app."""

    @app.exception_handler(NamesakeError)
    async def _namesake(request: Request, exc: NamesakeError) -> JSONResponse:
        if isinstance(exc, BusyError):  # said as it is: nothing failed, the client should come back
            headers = {"Retry-After": str(exc.retry_after)}
            return JSONResponse(error_body(exc.code, exc.message, None), 503, headers=headers)
        status = status_of(exc)
        if status >= 500:
            # the details (SQL, parameters, hosts) go to the log under the request id, never to the client
            log.error("request failed: %s", exc.message)
            public = WORKER_MESSAGE if isinstance(exc, WorkerError) else PUBLIC_MESSAGES.get(status, "internal error")
            return JSONResponse(error_body(exc.code, public, None), status)
        scope: Scope = getattr(request.state, "scope", Scope())
        return JSONResponse(error_body(exc.code, scope.outward_text(exc.message), exc.field), status_code=status)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI's "error parsing the body" (bad UTF-8, not JSON): invalid input
            return JSONResponse(error_body("INVALID_INPUT", "the body is not UTF-8 JSON", "body"), 422)
        code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # Starlette names the first matching route's methods only
            headers["Allow"] = ", ".join(allowed_methods(request))
        return JSONResponse(error_body(code, str(exc.detail), None), exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":  # its loc is a character offset, not a field
            where = [p for p in first.get("loc", ()) if isinstance(p, int)]
            at = f" at character {where[0]}" if where else ""
            return JSONResponse(error_body("INVALID_INPUT", f"the body is not valid JSON{at}", "body"), 422)
        if tuple(first.get("loc", ())) == ("body",) and first.get("type") in NOT_AN_OBJECT:
            return JSONResponse(error_body("INVALID_INPUT", "the body must be a JSON object", "body"), 422)
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
        field = ".".join(loc) or None
        message = f"{field}: {first.get('msg')}" if field else str(first.get("msg"))
        return JSONResponse(error_body("INVALID_INPUT", message, field), status_code=422)
