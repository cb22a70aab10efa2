"""In-memory work for the maintenance jobs: each job's report as given, and a lock that a test can hold.

It keeps the rule the jobs rely on (a job another runner holds is refused before any of its work runs, and a run
is recorded only once its work ends), so that the jobs' own rules can be tested without PostgreSQL. The same on
the real stores: tests/integration/test_jobs.py, test_retention.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from namesake.corrections_memory.cleanup import ErasureReceipt
from namesake.corrections_memory.promotion import PromotionReport
from namesake.jobs.runner import JobAlreadyRunningError, JobOutcome


@dataclass
class FakeJobWork:
    """The `JobWork` port over lists: `held` jobs are running elsewhere; `runs` records each finished run."""

    promoted: int = 0
    held: set[str] = field(default_factory=set)
    runs: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # each job's work, in the order it ran
    alerts: int = 0

    def exclusive(self, job: str, work: Callable[[], Any]) -> JobOutcome:
        if job in self.held:
            raise JobAlreadyRunningError(f"job {job} is already running elsewhere", field="job")
        report = work()
        self.runs.append(job)
        return JobOutcome(len(self.runs), report)

    def promote(self, progress: Callable[[int], None] | None, on_alert: Callable[[int], None] | None) -> Any:
        self.done.append("promote")
        if self.alerts and on_alert is not None:
            on_alert(self.alerts)
        if progress is not None:
            progress(self.promoted)
        return PromotionReport(promoted=self.promoted, alert=bool(self.alerts))

    def reconcile(self, progress: Callable[[int], None] | None) -> Any:
        self.done.append("reconcile")
        return {"missing": 0}

    def expire(self, progress: Callable[[int], None] | None) -> dict[str, int]:
        self.done.append("expire")
        return {"expired": 0}

    def erase(self, user_id: str, progress: Callable[[str, int], None] | None) -> ErasureReceipt:
        self.done.append(f"erase {user_id}")
        return ErasureReceipt(user_id, {}, {})
