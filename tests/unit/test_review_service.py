"""The review service's rules, on in-memory stores: decisions, groups, fixes by hand, undo and what they teach."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from namesake.core.errors import ConflictError, InputTooLargeError, InvalidInputError, NotFoundError, StoreError
from namesake.corrections_memory.unteach import UnteachOutcome, unteach_step
from namesake.domain.types import CorrectionStatus, MemoryScope, ReviewAction, SuggestionStatus
from namesake.reliability.edge_forms import EDGE_FORM
from namesake.review.service import ReviewService, check_transition
from namesake.transcripts.suggestions import ManualFix, Span
from tests.fakes.review import FakeReviewUnitOfWork

ACCEPT, EDIT, REJECT = ReviewAction.ACCEPT, ReviewAction.EDIT, ReviewAction.REJECT
PENDING, VALIDATED, REJECTED = SuggestionStatus.PENDING, SuggestionStatus.VALIDATED, SuggestionStatus.REJECTED


@pytest.fixture
def uow() -> FakeReviewUnitOfWork:
    return FakeReviewUnitOfWork()


@pytest.fixture
def review(uow: FakeReviewUnitOfWork) -> ReviewService:
    return ReviewService(uow)


def test_accepting_every_occurrence_of_a_pair_teaches_it_once(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    ids = [uow.add("Reiner", "Rainer"), uow.add("reiner", "Rainer"), uow.add("Reiner", "Rainer")]
    result = review.decide_group(suggestion_ids=ids, transcript_id="t1", action=ACCEPT)
    assert [s.status for s in result.suggestions] == [VALIDATED] * 3
    assert result.memory == "new"
    assert [(t.original, t.final, len(t.sources)) for t in uow.state.memory] == [("Reiner", "Rainer", 1)]
    assert {uow.row(i).taught_with for i in ids} == {uow.row(ids[0]).id}


def test_a_reject_teaches_nothing_and_a_repeat_changes_nothing(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    sid = uow.add("Cytova", "Cytiva")
    first = review.decide(suggestion_id=sid, transcript_id="t1", action=REJECT)
    again = review.decide(suggestion_id=sid, transcript_id="t1", action=REJECT)
    assert first.suggestion.status == again.suggestion.status == REJECTED
    assert first.memory is again.memory is None
    assert uow.state.memory == []


def test_accepting_a_rejected_suggestion_is_refused_and_leaves_it(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    sid = uow.add("Cytova", "Cytiva")
    review.decide(suggestion_id=sid, transcript_id="t1", action=REJECT)
    with pytest.raises(ConflictError, match="cannot accept a suggestion that is rejected"):
        review.decide(suggestion_id=sid, transcript_id="t1", action=ACCEPT)
    assert uow.row(sid).status == REJECTED and uow.state.memory == []


def test_an_edit_writes_the_reviewers_final_and_type_and_teaches_that(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    sid = uow.add("Backman", "Beckman")
    result = review.decide(suggestion_id=sid, transcript_id="t1", action=EDIT, final=" Beckman Coulter ",
                           entity_type="ORG")  # fmt: skip
    assert (result.suggestion.final, result.suggestion.entity_type) == ("Beckman Coulter", "ORG")
    assert [(t.original, t.final) for t in uow.state.memory] == [("Backman", "Beckman Coulter")]
    with pytest.raises(InvalidInputError, match="edit needs a non-empty final"):
        review.decide(suggestion_id=uow.add("Mitnou", "Meetnoo"), transcript_id="t1", action=EDIT, final="  ")


def test_accept_decides_one_pair_at_once_but_reject_takes_any(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    ids = [uow.add("Reiner", "Rainer"), uow.add("Cytova", "Cytiva")]
    with pytest.raises(InvalidInputError, match="one original → final pair"):
        review.decide_group(suggestion_ids=ids, transcript_id="t1", action=ACCEPT)
    assert {uow.row(i).status for i in ids} == {PENDING}
    result = review.decide_group(suggestion_ids=ids, transcript_id="t1", action=REJECT)
    assert {s.status for s in result.suggestions} == {REJECTED}


def test_accepting_an_edge_form_alone_teaches_nothing(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    sid = uow.add("energy", "Energy", signals={EDGE_FORM: 1.0})
    result = review.decide(suggestion_id=sid, transcript_id="t1", action=ACCEPT)
    assert result.suggestion.status == VALIDATED and result.memory is None and uow.state.memory == []


def test_accepting_a_symbol_the_pipeline_wrote_decides_it_and_teaches_nothing(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    sid = uow.add("and", "&")  # "S and P" → S&P: the memory holds words, and "&" has none
    result = review.decide(suggestion_id=sid, transcript_id="t1", action=ACCEPT)
    assert result.suggestion.status == VALIDATED and result.memory is None and uow.state.memory == []


def test_when_the_memory_write_fails_no_decision_is_written(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    ids = [uow.add("Reiner", "Rainer"), uow.add("Reiner", "Rainer")]
    uow.fail_next.append(StoreError("the vector store is unavailable"))
    with pytest.raises(StoreError):
        review.decide_group(suggestion_ids=ids, transcript_id="t1", action=ACCEPT)
    assert {uow.row(i).status for i in ids} == {PENDING} and uow.state.memory == []


def test_a_decision_taken_meanwhile_the_other_way_is_a_conflict(uow: FakeReviewUnitOfWork) -> None:
    sid = uow.add("Reiner", "Rainer")

    class Racing(ReviewService):
        def _load(self, suggestion_ids: list[str], transcript_id: str):  # type: ignore[no-untyped-def]
            seen = super()._load(suggestion_ids, transcript_id)
            uow.row(sid).status = REJECTED  # another request rejected it after this one read it
            return seen

    with pytest.raises(ConflictError, match="cannot accept"):
        Racing(uow).decide(suggestion_id=sid, transcript_id="t1", action=ACCEPT)
    assert uow.row(sid).status == REJECTED and uow.state.memory == []


def test_a_final_longer_than_the_memory_keeps_is_refused_before_anything_is_read(
    uow: FakeReviewUnitOfWork,
) -> None:
    review = ReviewService(FakeReviewUnitOfWork(max_final_chars=10))
    with pytest.raises(InputTooLargeError, match="the limit is 10"):
        review.decide(suggestion_id="not-read", transcript_id="t1", action=EDIT, final="x" * 11)


def test_undoing_one_occurrence_keeps_the_lesson_the_others_stand_by(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    ids = [uow.add("Reiner", "Rainer"), uow.add("Reiner", "Rainer")]
    review.decide_group(suggestion_ids=ids, transcript_id="t1", action=ACCEPT)
    partial = review.reopen(suggestion_ids=[ids[1]], transcript_id="t1")
    assert partial.memory == [] and len(uow.state.memory) == 1
    assert uow.row(ids[1]).status == PENDING and uow.row(ids[0]).status == VALIDATED
    whole = review.reopen(suggestion_ids=[ids[0]], transcript_id="t1")
    assert whole.memory == [UnteachOutcome.UNTAUGHT.value] and uow.state.memory == []
    assert [s.status for s in whole.suggestions] == [PENDING]


def test_undoing_an_edit_puts_back_the_proposal(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    sid = uow.add("Backman", "Beckman")
    review.decide(suggestion_id=sid, transcript_id="t1", action=EDIT, final="Beckman Coulter", entity_type="ORG")
    back = review.reopen(suggestion_ids=[sid], transcript_id="t1").suggestions[0]
    assert (back.final, back.entity_type, back.status) == ("Beckman", "PERSON", PENDING)


def _fix(uow: FakeReviewUnitOfWork, over: str) -> ManualFix:
    row = uow.row(over)
    return ManualFix(
        user_id="ana", transcript_id="t1", segment_id="1", start_char=row.start_char, end_char=row.end_char,
        original=row.original, final="Rainer Blair", entity_type="PERSON",
    )  # fmt: skip


def test_a_fix_by_hand_displaces_what_it_covers_and_its_undo_brings_it_back(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    covered = uow.add("Reiner", "Rainer")
    fixed = review.manual_fix(_fix(uow, covered))
    assert (fixed.suggestion.status, fixed.memory) == (VALIDATED, "new")
    assert uow.row(covered).status == REJECTED
    undone = review.reopen(suggestion_ids=[fixed.suggestion.id], transcript_id="t1")
    assert undone.removed == [fixed.suggestion.id]
    assert [(s.id, s.status) for s in undone.suggestions] == [(covered, PENDING)]
    assert uow.state.memory == []


def test_a_fix_by_hand_never_overwrites_an_accepted_suggestion(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    accepted = uow.add("Reiner", "Rainer")
    review.decide(suggestion_id=accepted, transcript_id="t1", action=ACCEPT)
    with pytest.raises(ConflictError, match="undo it first"):
        review.manual_fix(_fix(uow, accepted))
    assert len(uow.state.rows) == 1 and [t.final for t in uow.state.memory] == ["Rainer"]


def test_another_transcripts_suggestion_is_not_found(uow: FakeReviewUnitOfWork, review: ReviewService) -> None:
    theirs = uow.add("Reiner", "Rainer", transcript_id="t2")
    with pytest.raises(Exception, match="not found in transcript 't1'"):
        review.decide(suggestion_id=theirs, transcript_id="t1", action=ACCEPT)


@pytest.mark.parametrize(
    ("status", "action", "same_final", "applies"),
    [(PENDING, ACCEPT, True, True), (SuggestionStatus.AUTO_APPLIED, REJECT, True, True),
     (VALIDATED, ACCEPT, True, False), (REJECTED, REJECT, False, False)],
)  # fmt: skip
def test_which_transitions_apply_and_which_repeat(
    status: SuggestionStatus, action: ReviewAction, same_final: bool, applies: bool
) -> None:
    assert check_transition(status, action, same_final=same_final) is applies


def test_an_edit_of_an_accepted_suggestion_to_another_final_is_a_conflict() -> None:
    with pytest.raises(ConflictError):
        check_transition(VALIDATED, EDIT, same_final=False)


@dataclass
class Taught:
    original: str = "Reiner"
    final: str = "Rainer"
    status: str = CorrectionStatus.ACTIVE
    promoted_to_canonical: bool = False
    frequency: int = 1
    source_suggestion_ids: list[str] | None = None

    def __post_init__(self) -> None:
        self.source_suggestion_ids = self.source_suggestion_ids or ["s1"]


def test_unteaching_counts_down_then_forgets() -> None:
    assert unteach_step(Taught(frequency=2, source_suggestion_ids=["s1", "s2"]), "s1") is UnteachOutcome.REDUCED
    assert unteach_step(Taught(), "s1") is UnteachOutcome.UNTAUGHT
    assert unteach_step(Taught(), "other") is None
    assert unteach_step(None, "s1") is None


def test_unteaching_refuses_what_something_newer_depends_on() -> None:
    with pytest.raises(ConflictError, match="a newer correction has replaced “Reiner → Rainer”"):
        unteach_step(Taught(status=CorrectionStatus.SUPERSEDED), "s1")
    with pytest.raises(ConflictError, match="promoted to the user's vocabulary"):
        unteach_step(Taught(promoted_to_canonical=True), "s1")


def test_a_fix_by_hand_applied_to_its_other_matches_is_one_decision_undone_as_one(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    uow.state.segments["t1"] = {"1": "logs to Data Dog today", "2": "the data dog alerts", "3": "Data Dogma"}
    other = Span(segment_id="2", start_char=4, end_char=12)
    fix = ManualFix(user_id="ana", transcript_id="t1", segment_id="1", start_char=8, end_char=16, original="Data Dog",
                    final="Datadog", entity_type="ORG", also=[other])  # fmt: skip
    result = review.manual_fix(fix)
    assert [(s.original, s.final, s.status) for s in result.also] == [("data dog", "Datadog", VALIDATED)]
    assert [len(t.sources) for t in uow.state.memory] == [1]  # one lesson for both places
    assert [(d["label"], len(d["suggestion_ids"])) for d in review.history("t1")] == [("Data Dog → Datadog (2×)", 2)]
    review.reopen(suggestion_ids=[result.suggestion.id, result.also[0].id], transcript_id="t1")
    assert uow.state.rows == {} and uow.state.memory == []
    assert [d["undone"] for d in review.history("t1")] == [True]


@pytest.mark.parametrize(
    ("span", "says"),
    [
        (Span(segment_id="3", start_char=0, end_char=8), "not whole words"),  # "Data Dog" of "Data Dogmatic"
        (Span(segment_id="2", start_char=0, end_char=8), "not 'Data Dog'"),
        (Span(segment_id="9", start_char=0, end_char=3), "no segment '9'"),
        (Span(segment_id="2", start_char=4, end_char=40), "outside"),
    ],
)
def test_another_match_that_is_not_the_same_words_is_refused_and_nothing_is_written(
    uow: FakeReviewUnitOfWork, review: ReviewService, span: Span, says: str
) -> None:
    uow.state.segments["t1"] = {"1": "logs to Data Dog today", "2": "the data dog alerts", "3": "Data Dogmatic"}
    fix = ManualFix(user_id="ana", transcript_id="t1", segment_id="1", start_char=8, end_char=16, original="Data Dog",
                    final="Datadog", entity_type="ORG", also=[span])  # fmt: skip
    with pytest.raises(InvalidInputError, match=says):
        review.manual_fix(fix)
    assert uow.state.rows == {} and uow.state.memory == []
    with pytest.raises(NotFoundError):
        review.history("t1")


def test_everyday_words_are_taught_narrow_unless_the_reviewer_widens_them(
    uow: FakeReviewUnitOfWork, review: ReviewService
) -> None:
    three = uow.add("three", "III")
    assert review.decide(suggestion_id=three, transcript_id="t1", action=ACCEPT).scope == MemoryScope.LIST
    reiner = uow.add("Reiner", "Rainer")
    assert review.decide(suggestion_id=reiner, transcript_id="t1", action=ACCEPT).scope == MemoryScope.USER
    wide = uow.add("three", "3", transcript_id="t1")
    chosen = review.decide(suggestion_id=wide, transcript_id="t1", action=ACCEPT, scope=MemoryScope.USER)
    assert chosen.scope == MemoryScope.USER
    with pytest.raises(InvalidInputError, match="no scope"):
        review.decide(suggestion_id=uow.add("Cytova", "Cytiva"), transcript_id="t1", action=REJECT,
                      scope=MemoryScope.USER)  # fmt: skip
