"""Operators' routes: run a job now (same lock as the scheduler: a run in progress answers 409)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from namesake.api.deps import ServicesDep
from namesake.jobs import tasks

router = APIRouter(prefix="/v1", tags=["ops"])


@router.post("/jobs/promotion/run")
async def run_promotion(services: ServicesDep) -> dict[str, Any]:
    """Promote eligible corrections now."""
    m = services.metrics
    outcome = await run_in_threadpool(
        lambda: tasks.promote(services.runtime, on_alert=lambda n: m.promotion_alerts.inc())
    )
    m.promotions.inc(outcome.report.promoted)
    return {"job": "promotion", "run_id": outcome.run_id, "counts": outcome.counts()}


@router.post("/jobs/reconciliation/run")
async def run_reconciliation(services: ServicesDep) -> dict[str, Any]:
    """Reconcile the corrections index with PostgreSQL now."""
    outcome = await run_in_threadpool(lambda: tasks.reconcile(services.runtime))
    return {"job": "reconciliation", "run_id": outcome.run_id, "counts": outcome.counts()}
