"""The review unit of work over PostgreSQL and the corrections memory: one transaction, index writes undone on error.

The transcripts store's `SuggestionRows` and `DecisionLog` are the unit's rows and log; the memory is the writer
bound to the unit's own work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from namesake.corrections_memory import (
    CorrectionInput,
    CorrectionsMemoryWriter,
    MemoryUnit,
    UnteachOutcome,
    unteach_in,
)
from namesake.transcripts import DecisionLog, SuggestionRows


@dataclass
class SqlReviewMemory:
    """The corrections memory of one unit: the writer's calls with the unit's work bound."""

    writer: CorrectionsMemoryWriter
    work: MemoryUnit

    def lock(self, prepared: CorrectionInput) -> None:
        """The correction's lock, held to the end of the unit."""
        self.writer.lock(self.work, prepared)

    def record(self, prepared: CorrectionInput, *, source_suggestion_id: str | None = None) -> str:
        """The correction recorded in the unit."""
        return self.writer.record_in(self.work, prepared, source_suggestion_id=source_suggestion_id).outcome.value

    def unteach(self, *, user_id: str, suggestion_id: str) -> UnteachOutcome | None:
        """What the decision taught, taken back in the unit."""
        return unteach_in(self.writer, self.work, user_id=user_id, suggestion_id=suggestion_id)


@dataclass
class SqlReviewUnit:
    """Rows, log and memory sharing one transaction."""

    rows: SuggestionRows
    log: DecisionLog
    memory: SqlReviewMemory


class SqlReviewUnitOfWork:
    """Review units over the corrections memory writer's unit of work (PostgreSQL plus the vector index)."""

    def __init__(self, writer: CorrectionsMemoryWriter, grace_seconds: int) -> None:
        self.writer, self.grace_seconds = writer, grace_seconds
        # one limit for what a reviewer writes and what the memory keeps: nothing is cut silently
        self.max_final_chars = writer.settings.reliability_corrections_memory_final_text_max_len

    def prepare(self, correction: CorrectionInput) -> CorrectionInput:
        """Checked and embedded before the unit opens."""
        return self.writer.prepare(correction)

    @contextmanager
    def begin(self) -> Iterator[SqlReviewUnit]:
        """One transaction; on an error the index writes are undone, newest first."""
        with self.writer.unit() as work:
            rows = SuggestionRows(work.session, self.grace_seconds)
            yield SqlReviewUnit(rows, DecisionLog(work.session), SqlReviewMemory(self.writer, work))
