"""The review unit of work over PostgreSQL and the corrections memory: one transaction, index writes undone on error."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from namesake.core import NotFoundError
from namesake.corrections_memory import (
    CorrectionInput,
    CorrectionsMemoryWriter,
    MemoryUnit,
    PreparedCorrection,
    UnteachOutcome,
    unteach_in,
)
from namesake.domain import Suggestion, SuggestionStatus
from namesake.review.ports import Undone
from namesake.transcripts import (
    ManualFix,
    PairReach,
    StoredSuggestion,
    decide_in,
    history_in,
    language_of_in,
    load_suggestions_in,
    log_decision_in,
    log_undone_in,
    reach_in,
    save_manual_in,
    segment_texts_in,
    settle_in,
    still_standing_in,
    teaching_in,
    undo_in,
)
from namesake.users import check_transcript_not_erased


@dataclass
class SqlReviewRows:
    """The suggestion rows of one unit, through the transcripts store's statements."""

    session: Session
    grace_seconds: int

    def load(self, suggestion_ids: list[str], transcript_id: str) -> list[StoredSuggestion]:
        """The suggestions in the order asked; a transcript erased with its user is gone (410), not missing."""
        try:
            return load_suggestions_in(self.session, suggestion_ids, transcript_id)
        except NotFoundError:
            check_transcript_not_erased(self.session, transcript_id, self.grace_seconds)
            raise

    def decide(
        self,
        seen: StoredSuggestion,
        *,
        status: SuggestionStatus,
        final: str,
        on_race: Callable[[SuggestionStatus, str], None],
        taught_with: uuid.UUID | None = None,
        entity_type: str | None = None,
    ) -> Suggestion:
        """The decision written under a row lock."""
        return decide_in(
            self.session, seen, status=status, final=final, on_race=on_race, taught_with=taught_with,
            entity_type=entity_type,
        )  # fmt: skip

    def save_manual(self, fix: ManualFix, *, taught_with: uuid.UUID | None = None, shares: bool = False) -> Suggestion:
        """The fix by hand saved as a validated suggestion."""
        return save_manual_in(self.session, fix, self.grace_seconds, taught_with=taught_with, shares=shares)

    def language_of(self, transcript_id: str) -> str:
        """The transcript's language."""
        return language_of_in(self.session, transcript_id)

    def segment_texts(self, transcript_id: str) -> dict[str, str]:
        """The transcript's segments as analysed."""
        return segment_texts_in(self.session, transcript_id)

    def reach(self, transcript_id: str, pairs: list[tuple[str, str]]) -> tuple[list[PairReach], int]:
        """Where the pairs stand undecided, here and in the owner's other calls."""
        return reach_in(self.session, transcript_id, pairs)

    def log_decision(
        self, transcript_id: str, *, action: str, label: str, suggestion_ids: list[str], scope: str | None
    ) -> None:
        """The decision kept for the history."""
        log_decision_in(self.session, transcript_id, action=action, label=label,
                                      suggestion_ids=suggestion_ids, scope=scope)  # fmt: skip

    def log_undone(self, transcript_id: str, suggestion_ids: list[str]) -> None:
        """The decisions naming these suggestions, taken back."""
        log_undone_in(self.session, transcript_id, suggestion_ids)

    def history(self, transcript_id: str) -> list[dict[str, Any]]:
        """The transcript's decisions, newest first."""
        return history_in(self.session, transcript_id)

    def teaching(self, decided: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The memory writes behind the accepted ones."""
        return teaching_in(self.session, decided)

    def still_standing(self, leads: set[uuid.UUID], leaving: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The leads still stood by outside `leaving`."""
        return still_standing_in(self.session, leads, leaving)

    def undo(self, seen: StoredSuggestion) -> Undone:
        """The suggestion put back as the pipeline left it."""
        removed, restored = undo_in(self.session, seen)
        return Undone(removed, restored)

    def settle(self, suggestion_ids: list[uuid.UUID]) -> dict[uuid.UUID, Suggestion]:
        """Flushed and read back."""
        return settle_in(self.session, suggestion_ids)


@dataclass
class SqlReviewMemory:
    """The corrections memory of one unit, through the writer."""

    writer: CorrectionsMemoryWriter
    work: MemoryUnit

    def lock(self, prepared: PreparedCorrection) -> None:
        """The correction's lock, held to the end of the unit."""
        self.writer.lock(self.work, prepared)

    def record(self, prepared: PreparedCorrection, *, source_suggestion_id: str | None = None) -> str:
        """The correction recorded in the unit."""
        return self.writer.record_in(self.work, prepared, source_suggestion_id=source_suggestion_id).outcome.value

    def unteach(self, *, user_id: str, suggestion_id: str) -> UnteachOutcome | None:
        """What the decision taught, taken back in the unit."""
        return unteach_in(self.writer, self.work, user_id=user_id, suggestion_id=suggestion_id)


@dataclass
class SqlReviewUnit:
    """Rows and memory sharing one transaction."""

    rows: SqlReviewRows
    memory: SqlReviewMemory


class SqlReviewUnitOfWork:
    """Review units over the corrections memory writer's unit of work (PostgreSQL plus the vector index)."""

    def __init__(self, writer: CorrectionsMemoryWriter, grace_seconds: int) -> None:
        self.writer, self.grace_seconds = writer, grace_seconds
        # one limit for what a reviewer writes and what the memory keeps: nothing is cut silently
        self.max_final_chars = writer.settings.reliability_corrections_memory_final_text_max_len

    def prepare(self, correction: CorrectionInput) -> PreparedCorrection:
        """Checked and embedded before the unit opens."""
        return self.writer.prepare(correction)

    @contextmanager
    def begin(self) -> Iterator[SqlReviewUnit]:
        """One transaction; on an error the index writes are undone, newest first."""
        with self.writer.unit() as work:
            yield SqlReviewUnit(SqlReviewRows(work.session, self.grace_seconds), SqlReviewMemory(self.writer, work))
