"""The reviewer's loop: accept / edit / reject a suggestion, or fix a span nothing suggested — and remember it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from namesake.corrections_memory.decision import WriteOutcome
from namesake.corrections_memory.writer import CorrectionInput, CorrectionMemoryWriter
from namesake.db import Database
from namesake.errors import ConflictError, InputTooLargeError, InvalidInputError, NotFoundError, StoreError
from namesake.models import Suggestion, Transcript
from namesake.reliability.service import ensure_transcript, suggestion_json

# Which decisions each status allows; a repeat of the decision already taken is idempotent.
TRANSITIONS: dict[str, set[str]] = {
    "pending": {"accept", "edit", "reject"},
    "auto_applied": {"accept", "edit", "reject"},
    "validated": set(),
    "rejected": set(),
}
ACTION_STATUS = {"accept": "validated", "edit": "validated", "reject": "rejected"}


def check_transition(status: str, action: str, *, same_final: bool) -> bool:
    """True to apply, False for an idempotent repeat; ConflictError for an impossible transition."""
    if action in TRANSITIONS.get(status, set()):
        return True
    if ACTION_STATUS[action] == status and (action == "reject" or same_final):
        return False
    raise ConflictError(f"cannot {action} a suggestion that is {status}", field="status")


@dataclass
class ReviewResult:
    """The suggestion after the decision, and what the memory did (None for reject / repeat)."""

    suggestion: dict[str, Any]
    memory: str | None


@dataclass(frozen=True)
class ManualFix:
    """A span the reviewer corrected although nothing was suggested."""

    user_id: str
    transcript_id: str
    segment_id: str
    start_char: int
    end_char: int
    original: str
    final: str
    entity_type: str
    segment_text: str | None = None


class ReviewService:
    """Applies review decisions to suggestions and records the corrections they teach."""

    def __init__(self, db: Database, writer: CorrectionMemoryWriter, max_final_chars: int = 500) -> None:
        self.db, self.writer, self.max_final_chars = db, writer, max_final_chars

    def _check_final(self, final: str) -> None:
        if len(final) > self.max_final_chars:
            raise InputTooLargeError(
                f"final has {len(final)} characters, the limit is {self.max_final_chars}", field="final"
            )

    def _load(self, suggestion_id: str, transcript_id: str) -> tuple[Suggestion, str]:
        try:
            sid = uuid.UUID(suggestion_id)
        except ValueError as exc:
            raise NotFoundError(f"suggestion {suggestion_id!r} not found", field="suggestion_id") from exc
        with self.db.session() as s:
            row = s.execute(
                select(Suggestion, Transcript.user_id)
                .join(Transcript, Transcript.id == Suggestion.transcript_id)
                .where(Suggestion.id == sid, Suggestion.transcript_id == transcript_id)
            ).first()
        if row is None:  # another transcript's suggestion is as invisible as a missing one
            raise NotFoundError(f"suggestion {suggestion_id!r} not found in transcript {transcript_id!r}")
        return row[0], row[1]

    def decide(self, *, suggestion_id: str, transcript_id: str, action: str, final: str | None = None) -> ReviewResult:
        """accept | edit (with final) | reject; the memory is written before the status, so a retry replays."""
        if action not in ACTION_STATUS:
            raise InvalidInputError(f"unknown action {action!r}", field="action")
        if action == "edit" and (final is None or not final.strip()):
            raise InvalidInputError("edit needs a non-empty final", field="final")
        if final is not None:
            self._check_final(final)
        sugg, user_id = self._load(suggestion_id, transcript_id)
        new_final = final.strip() if action == "edit" and final else sugg.final
        if not check_transition(sugg.status, action, same_final=new_final == sugg.final):
            return ReviewResult(suggestion_json(sugg), None)
        memory: str | None = None
        if action != "reject":
            result = self.writer.record(
                CorrectionInput(
                    user_id=user_id,
                    entity_type=sugg.entity_type,
                    original=sugg.original,
                    final=new_final,
                    action=action,
                    source_suggestion_id=str(sugg.id),
                    transcript_id=transcript_id,
                )
            )
            memory = result.outcome.value
        try:
            with self.db.session() as s:
                row = s.get(Suggestion, sugg.id, with_for_update=True)
                assert row is not None
                if row.status != sugg.status:  # decided meanwhile by another request
                    check_transition(row.status, action, same_final=new_final == row.final)
                    return ReviewResult(suggestion_json(row), memory)
                row.status, row.final, row.decided_at = ACTION_STATUS[action], new_final, func.now()
                s.flush()
                s.refresh(row)
                return ReviewResult(suggestion_json(row), memory)
        except IntegrityError as exc:
            raise ConflictError("another suggestion of this span already has that final", field="final") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    def manual_fix(self, fix: ManualFix) -> ReviewResult:
        """Record a correction for a span nothing suggested, as a validated suggestion plus a memory write."""
        self._check_final(fix.final)
        if fix.segment_text is not None:
            if not 0 <= fix.start_char < fix.end_char <= len(fix.segment_text):
                raise InvalidInputError("start_char/end_char are outside segment_text", field="end_char")
            if fix.segment_text[fix.start_char : fix.end_char] != fix.original:
                raise InvalidInputError("original does not match segment_text at the span", field="original")
        elif fix.end_char <= fix.start_char:
            raise InvalidInputError("end_char must be after start_char", field="end_char")
        try:
            with self.db.session() as s:  # ownership first: nothing is remembered for a transcript not theirs
                ensure_transcript(s, fix.transcript_id, fix.user_id, None)
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc
        result = self.writer.record(
            CorrectionInput(
                user_id=fix.user_id,
                entity_type=fix.entity_type,
                original=fix.original,
                final=fix.final,
                action="edit",
                transcript_id=fix.transcript_id,
                segment_text=fix.segment_text,
                start_char=fix.start_char,
                end_char=fix.end_char,
            )
        )
        try:
            with self.db.session() as s:
                row = s.scalar(
                    select(Suggestion).where(
                        Suggestion.transcript_id == fix.transcript_id,
                        Suggestion.segment_id == fix.segment_id,
                        Suggestion.start_char == fix.start_char,
                        Suggestion.end_char == fix.end_char,
                        Suggestion.final == fix.final,
                    )
                )
                if row is None:
                    row = Suggestion(
                        transcript_id=fix.transcript_id, segment_id=fix.segment_id, start_char=fix.start_char,
                        end_char=fix.end_char, original=fix.original, final=fix.final, entity_type=fix.entity_type,
                        confidence=1.0, signals={"manual": 1.0}, status="validated", source="manual",
                        decided_at=func.now(),
                    )  # fmt: skip
                    s.add(row)
                else:
                    row.status, row.decided_at = "validated", func.now()
                s.flush()
                s.refresh(row)
                return ReviewResult(suggestion_json(row), result.outcome.value)
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc


def memory_outcomes() -> list[str]:
    """Label values of the memory-write metric."""
    return [o.value for o in WriteOutcome]
