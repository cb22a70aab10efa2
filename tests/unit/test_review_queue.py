"""The review queue's rules on in-memory stores: the fold counts as waiting only once seen, the text as reviewed."""

from __future__ import annotations

import uuid

import pytest

from namesake.core.errors import NotFoundError
from namesake.domain.types import SuggestionStatus
from namesake.review.queue import ReviewQueue
from namesake.transcripts.retention import TranscriptDeletion
from tests.fakes.review import FakeQueueRows, FakeReviewUnitOfWork


def _queue(
    uow: FakeReviewUnitOfWork, fold_below: float, values: list[str] | None = None
) -> tuple[ReviewQueue, FakeQueueRows]:
    rows = FakeQueueRows(uow.state)
    listed = values or []
    return ReviewQueue(rows, fold_below, lambda tid: TranscriptDeletion(tid, 0, 0), lambda tid: listed), rows


def test_a_pending_suggestion_below_the_fold_is_not_counted_as_waiting_above_it() -> None:
    uow = FakeReviewUnitOfWork()
    sure, unsure = uow.add("Reiner", "Rainer"), uow.add("cove", "COVID")
    queue, rows = _queue(uow, fold_below=0.3)
    rows.confidence[uuid.UUID(unsure)] = 0.1
    [listed] = queue.list_transcripts(tenant=None, user_id=None, pending_only=True, limit=10, offset=0)
    assert listed["counts"]["pending"] == 2 and listed["counts"]["to_decide"] == 1
    uow.row(sure).status = SuggestionStatus.VALIDATED
    [listed] = queue.list_transcripts(tenant=None, user_id=None, pending_only=True, limit=10, offset=0)
    assert listed["counts"]["to_decide"] == 0  # only the fold is left: nothing above it
    assert queue.progress(tenant=None, user_id=None) == {"transcripts": 1, "reviewed": 0, "to_review": 1}
    uow.row(unsure).status = SuggestionStatus.REJECTED  # the fold dismissed: now it is reviewed
    assert queue.progress(tenant=None, user_id=None) == {"transcripts": 1, "reviewed": 1, "to_review": 0}


def test_the_text_as_reviewed_writes_in_what_stands_and_counts_what_is_open() -> None:
    uow = FakeReviewUnitOfWork()
    accepted, rejected = uow.add("Reiner", "Rainer"), uow.add("cove", "COVID")
    uow.add("danaher", "Danaher")
    uow.state.segments["t1"] = {"1": "Reiner cove danaher"}
    uow.row(accepted).status, uow.row(rejected).status = SuggestionStatus.VALIDATED, SuggestionStatus.REJECTED
    queue, _ = _queue(uow, fold_below=0.3)
    reviewed = queue.reviewed("t1")
    assert [s.text for s in reviewed.segments] == ["Rainer cove danaher"]
    assert (reviewed.applied, reviewed.open) == (1, 1)
    with pytest.raises(NotFoundError):
        queue.reviewed("t2")


def test_a_half_fix_open_or_accepted_offers_its_whole_value_and_a_rejected_one_does_not() -> None:
    uow = FakeReviewUnitOfWork()
    half = uow.add("COVERT", "COVID")
    uow.add("NINETEEN", "nineteen")  # another suggestion on the rest: the whole fix would displace it
    uow.state.segments["t1"] = {"1": "COVERT NINETEEN"}
    queue, _ = _queue(uow, fold_below=0.3, values=["COVID-19"])
    whole = queue.completions(queue.transcript_view("t1"))
    assert {k: (c.original, c.final) for k, c in whole.items()} == {half: ("COVERT NINETEEN", "COVID-19")}
    uow.row(half).status = SuggestionStatus.VALIDATED
    assert list(queue.completions(queue.transcript_view("t1"))) == [half]
    uow.row(half).status = SuggestionStatus.REJECTED
    assert queue.completions(queue.transcript_view("t1")) == {}
