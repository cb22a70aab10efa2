"""APScheduler wiring only: every replica schedules the jobs, the advisory lock lets one run them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from namesake.jobs import JobAlreadyRunningError

if TYPE_CHECKING:
    from namesake.app.services import Services

log = logging.getLogger(__name__)


def _guarded(name: str, fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except JobAlreadyRunningError:
            log.info("job %s skipped: another replica runs it", name)
        except Exception:  # the scheduler thread must survive; the failure is already in job_runs
            log.exception("job %s failed", name)

    return run


def start_scheduler(services: Services) -> BackgroundScheduler:
    """Promotion daily at PROMO_RUN_HOUR_UTC (retention half an hour later, when set), reconciliation every
    RECONCILE_INTERVAL_MINUTES."""
    s = services.runtime.settings
    hour = s.reliability_corrections_memory_promo_run_hour_utc
    jobs: list[tuple[str, Callable[[], object], BaseTrigger]] = [
        ("promotion", services.jobs.promote, CronTrigger(hour=hour, minute=0, timezone="UTC")),
        ("reconciliation", services.jobs.reconcile,
         IntervalTrigger(minutes=s.reliability_corrections_memory_reconcile_interval_minutes)),
    ]  # fmt: skip
    if s.transcript_retention_days is not None:
        jobs.append(("retention", services.jobs.expire_transcripts, CronTrigger(hour=hour, minute=30, timezone="UTC")))
    scheduler = BackgroundScheduler(timezone="UTC")
    for name, fn, trigger in jobs:
        scheduler.add_job(_guarded(name, fn), trigger, id=name, max_instances=1, coalesce=True)
    scheduler.start()
    return scheduler
