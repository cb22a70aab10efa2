"""Maintenance jobs: single-runner execution (advisory lock), run records, and the jobs themselves."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.jobs.ports import JobWork
    from namesake.jobs.runner import JobAlreadyRunningError, JobOutcome
    from namesake.jobs.tasks import Jobs
    from namesake.jobs.work import RuntimeJobWork

__all__ = [
    "JobAlreadyRunningError",
    "JobOutcome",
    "JobWork",
    "Jobs",
    "RuntimeJobWork",
]
__getattr__ = lazy_names(__name__, __file__)
