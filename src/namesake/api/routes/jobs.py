"""Operators' routes (admin keys only): run a job now (same lock as the scheduler: a run in progress answers 409)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from namesake.api.deps import ServicesDep
from namesake.api.schemas import JobRunOut, errors

router = APIRouter(prefix="/v1", tags=["ops"])


@router.post("/jobs/promotion/run", responses=errors(409))
async def run_promotion(services: ServicesDep) -> JobRunOut:
    """Promote eligible corrections now."""
    outcome = await run_in_threadpool(services.jobs.promote)
    return JobRunOut(job="promotion", run_id=outcome.run_id, counts=outcome.counts())


@router.post("/jobs/reconciliation/run", responses=errors(409))
async def run_reconciliation(services: ServicesDep) -> JobRunOut:
    """Reconcile the corrections index with PostgreSQL now."""
    outcome = await run_in_threadpool(services.jobs.reconcile)
    return JobRunOut(job="reconciliation", run_id=outcome.run_id, counts=outcome.counts())


@router.post("/jobs/retention/run", responses=errors(409))
async def run_retention(services: ServicesDep) -> JobRunOut:
    """Delete the transcripts older than TRANSCRIPT_RETENTION_DAYS now."""
    outcome = await run_in_threadpool(services.jobs.expire_transcripts)
    return JobRunOut(job="retention", run_id=outcome.run_id, counts=outcome.counts())
