"""Run a job once across replicas: pg_try_advisory_lock on the job's key, a job_runs row per run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, TypeVar

from sqlalchemy import func, update

from namesake.adapters import Database, JobRun
from namesake.core import ConflictError

log = logging.getLogger(__name__)
T = TypeVar("T")


class JobAlreadyRunningError(ConflictError):
    """Another runner holds this job's lock: this one skips."""

    code = "JOB_RUNNING"


@dataclass
class JobOutcome:
    """A finished run: its job_runs id and its report."""

    run_id: int
    report: Any

    def counts(self) -> dict[str, Any]:
        """The report as plain JSON."""
        if is_dataclass(self.report) and not isinstance(self.report, type):
            return asdict(self.report)
        return dict(self.report) if isinstance(self.report, dict) else {"result": self.report}


def job_lock_key(job: str) -> str:
    """Advisory-lock key of a job (hashed by PostgreSQL)."""
    return f"namesake-job:{job}"


def run_exclusive(db: Database, job: str, work: Callable[[], T]) -> JobOutcome:
    """Run `work` if no other process runs `job`; record start, end, status, counts or error."""
    with db.advisory_lock(job_lock_key(job)) as got:
        if not got:
            raise JobAlreadyRunningError(f"job {job} is already running elsewhere", field="job")
        with db.session() as s:
            run = JobRun(job=job, status="running")
            s.add(run)
            s.flush()
            run_id = run.id
        try:
            report = work()
        except Exception as exc:  # recorded, then re-raised: never swallowed
            _finish(db, run_id, "failed", {}, f"{type(exc).__name__}: {exc}")
            raise
        outcome = JobOutcome(run_id, report)
        _finish(db, run_id, "succeeded", outcome.counts(), None)
        return outcome


def _finish(db: Database, run_id: int, status: str, counts: dict[str, Any], error: str | None) -> None:
    with db.session() as s:
        s.execute(
            update(JobRun)
            .where(JobRun.id == run_id)
            .values(status=status, counts=counts, error=error, finished_at=func.now())
        )
    log.info("job run %s finished: %s %s", run_id, status, error or counts)
