"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from namesake.api.deps import ServicesDep
from namesake.api.schemas import HealthOut, ReadyOut

router = APIRouter(tags=["ops"])


@router.get("/healthz")
def healthz() -> HealthOut:
    """The process is up (no dependency checked: restarts must not cascade)."""
    return HealthOut(status="ok")


@router.get(
    "/readyz",
    responses={
        200: {"model": ReadyOut, "description": "ready"},
        503: {"model": ReadyOut, "description": "a store failed"},
    },
)
def readyz(services: ServicesDep) -> JSONResponse:
    """PostgreSQL answers and the vector store lists its collections; 503 naming which failed.

    Open, like /healthz, so an orchestrator's probe needs no key; it says which store failed and
    nothing more (the reason goes to the log).
    """
    checks = services.runtime.readiness()
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ready else "unavailable", "checks": checks}, 200 if ready else 503)
