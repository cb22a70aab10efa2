"""The jobs' rules on in-memory work: the periodic jobs run once across replicas, a promotion is counted however it
was started, erasure is never held back by a lock."""

from __future__ import annotations

import pytest

from namesake.jobs.runner import JobAlreadyRunningError
from namesake.jobs.tasks import Jobs
from tests.fakes.jobs import FakeJobWork


def test_a_promotion_is_counted_and_its_alerts_passed_on() -> None:
    work, counted, alerts = FakeJobWork(promoted=7, alerts=2), [], []
    outcome = Jobs(work, on_promoted=counted.append, on_alert=alerts.append).promote()
    assert outcome.report.promoted == 7 and counted == [7] and alerts == [2]
    assert work.runs == ["promotion"]


@pytest.mark.parametrize(("job", "start"), [("promotion", Jobs.promote), ("reconciliation", Jobs.reconcile),
                                            ("retention", Jobs.expire_transcripts)])  # fmt: skip
def test_a_periodic_job_held_elsewhere_does_no_work_and_counts_nothing(job: str, start: object) -> None:
    work, counted = FakeJobWork(promoted=3, held={job}), []
    with pytest.raises(JobAlreadyRunningError):
        start(Jobs(work, on_promoted=counted.append))  # type: ignore[operator]
    assert work.done == [] and work.runs == [] and counted == []


def test_erasure_runs_while_the_periodic_jobs_are_held() -> None:
    work = FakeJobWork(held={"promotion", "reconciliation", "retention"})
    receipt = Jobs(work).erase_user("ana")
    assert receipt.user_id == "ana" and work.done == ["erase ana"] and work.runs == []
