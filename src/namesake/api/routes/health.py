"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from namesake.api.deps import RuntimeDep, require_key
from namesake.errors import NamesakeError

router = APIRouter(tags=["ops"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up (no dependency checked: restarts must not cascade)."""
    return {"status": "ok"}


@router.get("/readyz", dependencies=[Depends(require_key)])
def readyz(runtime: RuntimeDep) -> JSONResponse:
    """PostgreSQL answers and the vector store lists its collections; 503 naming what failed."""
    checks: dict[str, str] = {}
    try:
        runtime.db.ping()
        checks["postgresql"] = "ok"
    except NamesakeError as exc:
        checks["postgresql"] = exc.message
    try:
        runtime.vectors.list_collections()
        checks["vector_store"] = "ok"
    except NamesakeError as exc:
        checks["vector_store"] = exc.message
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ready else "unavailable", "checks": checks}, 200 if ready else 503)
