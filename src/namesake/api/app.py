"""create_app(settings): the FastAPI application, its lifespan, auth, limits and metrics."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from namesake import __version__
from namesake.adapters import Runtime, open_runtime
from namesake.analysis import StageProcess, find_unwritable
from namesake.api.connected import SERVER_RECEIVE
from namesake.api.deps import require_admin, require_key
from namesake.api.errors import error_body
from namesake.api.errors import install as install_error_handlers
from namesake.api.routes import health, jobs, review_page, suggestions, transcripts, users
from namesake.api.schemas import errors as error_responses
from namesake.app import IdleGiveBack, Metrics, announce, build_services, start_scheduler, warm_up, withdraw
from namesake.core import Settings, get_settings, jobs_run_here, key_scopes, request_id

# A client's X-Request-ID is kept up to this many characters.
REQUEST_ID_MAX = 128


def _unwritable_field(raw: bytes) -> tuple[str, str] | None:
    """Where a JSON body holds text no store can hold (a NUL, a lone surrogate) and why, or None (also when it does
    not parse: the route's own parsing answers)."""
    try:
        return find_unwritable(json.loads(raw))
    except ValueError:
        return None


# What clients send a JSON body as when they do not say it is JSON (curl -d sends a form's type).
UNSAID_JSON = ("", "application/x-www-form-urlencoded", "text/plain")


def _json_unsaid(request: Request, raw: bytes) -> Response | None:
    """A JSON body sent without the JSON content type is read as JSON; one that is not JSON is refused (415) with
    what to send. None: nothing to do (the body says it is JSON, or there is none)."""
    said = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if not raw.strip() or said == "application/json" or said.endswith("+json"):
        return None
    if said not in UNSAID_JSON:  # XML, a multipart form, an image: never JSON, whatever the bytes
        message = f"the body is {said}, not JSON: send JSON with Content-Type: application/json"
        return JSONResponse(error_body("UNSUPPORTED_MEDIA_TYPE", message, "Content-Type"), status_code=415)
    try:
        json.loads(raw)
    except ValueError:
        message = f"the body is not JSON ({said or 'no content type'}): send JSON with Content-Type: application/json"
        return JSONResponse(error_body("UNSUPPORTED_MEDIA_TYPE", message, "Content-Type"), status_code=415)
    headers = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"content-type"]
    request.scope["headers"] = [*headers, (b"content-type", b"application/json")]
    return None


def create_app(
    settings: Settings | None = None, runtime: Runtime | None = None, address: tuple[str, int] | None = None
) -> FastAPI:
    """Build the app (settings from the environment when not given: `uvicorn --factory namesake.api.app:create_app`).

    The lifespan opens the stores unless a runtime is handed in (tests); with an `address` (`namesake serve`), it
    says where it listens in the data dir once ready, and takes it back when it stops.
    """
    settings = settings or get_settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        scheduler, idle = None, None
        # started first: it loads and warms the stages and the model while this process opens the stores
        stages = StageProcess(settings) if settings.analysis_stage_process and settings.llm_provider == "none" else None
        try:
            rt = runtime or open_runtime(settings)
        except BaseException:
            if stages is not None:
                stages.close()
            raise
        try:
            app.state.services = services = build_services(rt, metrics, stages)
            if settings.namesake_warm_up:
                # before serving: the first requests after /readyz says ready cost what later ones do
                await run_in_threadpool(warm_up, rt, stages)
            if jobs_run_here(settings):
                scheduler = start_scheduler(services)
            if settings.idle_give_back_seconds:
                give_back: list[Callable[[], object]] = [rt.clear_caches, rt.vectors.release_idle, rt.db.release_idle]
                if stages is not None:  # last: the child is started again fresh
                    give_back.append(stages.recycle)
                idle = IdleGiveBack(
                    services.admission,
                    settings.idle_give_back_seconds,
                    give_back,
                    trim_seconds=settings.heap_trim_seconds,
                )
                idle.start()
            if address is not None:
                announce(settings, *address)
            yield
        finally:
            if address is not None:
                withdraw(settings)
            if scheduler is not None:
                scheduler.shutdown(wait=True)
            if idle is not None:
                idle.stop()
            if stages is not None:
                stages.close()
            if owned:
                rt.close()

    app = FastAPIOffline(title="namesake", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    app.state.key_scopes = key_scopes(settings.namesake_api_keys)  # parsed once, not per request
    install_error_handlers(app)
    max_body = settings.max_request_bytes

    @app.middleware("http")
    async def limits_and_metrics(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        """Name the request (X-Request-ID, echoed), refuse oversized bodies unread, count and time it by route."""
        rid = request.headers.get("x-request-id", "")[:REQUEST_ID_MAX] or uuid.uuid4().hex
        # not reset on the way out: the server's access line for this request is written after we return,
        # in the same task (each request runs in a task of its own, so nothing leaks to the next one)
        request_id.set(rid)
        request.scope[SERVER_RECEIVE] = request.receive  # what tells a long analysis that its client left
        response = await _limited(request, call_next)
        response.headers["X-Request-ID"] = rid
        return response

    async def _limited(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        too_large = JSONResponse(
            error_body("TOO_LARGE", f"request body over {max_body} bytes", "body"), status_code=413
        )
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > max_body:
            return too_large
        if request.method in ("POST", "PUT", "PATCH"):
            # the limit holds for what is read, chunked bodies included: counted as it streams in
            body, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_body:
                    return too_large
                body.append(chunk)
            raw = b"".join(body)
            request._body = raw  # the routes read the body already received
            unsaid = _json_unsaid(request, raw)
            if unsaid is not None:
                return unsaid
            lowered = raw.lower()
            if b"\\u0000" in lowered or b"\\ud" in lowered:  # a NUL, or a UTF-16 surrogate (maybe lone)
                bad = _unwritable_field(raw)
                if bad is not None:
                    field, why = bad
                    return JSONResponse(error_body("INVALID_INPUT", f"{field}: {why}", field), 422)
        t0 = time.perf_counter()
        response = await call_next(request)
        route = getattr(request.scope.get("route"), "path", "unmatched")
        metrics.requests.labels(request.method, route, str(response.status_code)).inc()
        metrics.latency.labels(request.method, route).observe(time.perf_counter() - t0)
        return response

    app.include_router(health.router)
    app.include_router(review_page.router)
    if settings.namesake_cors_origins:  # a review page served from another origin
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.namesake_cors_origins,
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "X-Next-Before"],
            max_age=600,
        )
    secured, admin = [Depends(require_key)], [Depends(require_admin)]
    # every keyed route can answer these; routes add their own (404, 409, 413)
    keyed = error_responses(401, 403, 422, 503)
    for router in (transcripts.router, suggestions.router, users.router):
        app.include_router(router, dependencies=secured, responses=keyed)
    app.include_router(jobs.router, dependencies=admin, responses=keyed)

    @app.get(
        "/metrics",
        tags=["ops"],
        dependencies=admin,
        responses={
            200: {"description": "Prometheus text format", "content": {"text/plain": {"schema": {"type": "string"}}}},
            **error_responses(401, 403),
        },
    )
    def prometheus() -> Response:
        """Prometheus exposition of this process's counters."""
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
