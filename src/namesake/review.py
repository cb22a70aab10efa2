"""The reviewer's loop: accept / edit / reject a suggestion, or fix a span nothing suggested — and remember it."""

from __future__ import annotations

from dataclasses import dataclass

from namesake.corrections_memory.writer import CorrectionInput, CorrectionMemoryWriter
from namesake.errors import ConflictError, InputTooLargeError, InvalidInputError
from namesake.reliability.types import Suggestion, SuggestionStatus
from namesake.transcripts import ManualFix, TranscriptStore, decide_in, save_manual_in

# Which decisions each status allows; a repeat of the decision already taken is idempotent.
TRANSITIONS: dict[SuggestionStatus, set[str]] = {
    SuggestionStatus.PENDING: {"accept", "edit", "reject"},
    SuggestionStatus.AUTO_APPLIED: {"accept", "edit", "reject"},
    SuggestionStatus.VALIDATED: set(),
    SuggestionStatus.REJECTED: set(),
}
ACTION_STATUS = {"accept": SuggestionStatus.VALIDATED, "edit": SuggestionStatus.VALIDATED,
                 "reject": SuggestionStatus.REJECTED}  # fmt: skip


def check_transition(status: SuggestionStatus, action: str, *, same_final: bool) -> bool:
    """True to apply, False for an idempotent repeat; ConflictError for an impossible transition."""
    if action in TRANSITIONS.get(status, set()):
        return True
    if ACTION_STATUS[action] == status and (action == "reject" or same_final):
        return False
    raise ConflictError(f"cannot {action} a suggestion that is {status}", field="status")


@dataclass
class ReviewResult:
    """The suggestion after the decision, and what the memory did (None for reject / repeat)."""

    suggestion: Suggestion
    memory: str | None


class ReviewService:
    """Applies review decisions to suggestions and records the corrections they teach."""

    def __init__(self, transcripts: TranscriptStore, writer: CorrectionMemoryWriter) -> None:
        self.transcripts, self.writer = transcripts, writer
        # one limit for what a reviewer writes and what the memory keeps: nothing is cut silently
        self.max_final_chars = writer.settings.reliability_corrections_memory_final_text_max_len

    def _check_final(self, final: str) -> None:
        if len(final) > self.max_final_chars:
            raise InputTooLargeError(
                f"final has {len(final)} characters, the limit is {self.max_final_chars} "
                "(RELIABILITY_CORRECTIONS_MEMORY_FINAL_TEXT_MAX_LEN: what the memory keeps)",
                field="final",
            )

    def decide(self, *, suggestion_id: str, transcript_id: str, action: str, final: str | None = None) -> ReviewResult:
        """accept | edit (with final) | reject; the status and the correction it teaches are one transaction."""
        if action not in ACTION_STATUS:
            raise InvalidInputError(f"unknown action {action!r}", field="action")
        if action == "edit" and (final is None or not final.strip()):
            raise InvalidInputError("edit needs a non-empty final", field="final")
        if final is not None:
            self._check_final(final)
        sugg = self.transcripts.load_suggestion(suggestion_id, transcript_id)
        new_final = final.strip() if action == "edit" and final else sugg.final
        if not check_transition(sugg.status, action, same_final=new_final == sugg.final):
            return ReviewResult(sugg.suggestion, None)

        def judge_race(status: SuggestionStatus, current_final: str) -> None:
            check_transition(status, action, same_final=new_final == current_final)

        status = ACTION_STATUS[action]
        if action == "reject":
            return ReviewResult(
                self.transcripts.set_decision(sugg, status=status, final=new_final, on_race=judge_race), None
            )
        prepared = self.writer.prepare(
            CorrectionInput(
                user_id=sugg.user_id,
                entity_type=sugg.entity_type,
                original=sugg.original,
                final=new_final,
                action=action,
                source_suggestion_id=str(sugg.id),
                transcript_id=transcript_id,
                context=sugg.context_phrase or None,
            )
        )
        # the decision and the correction it teaches commit together, or neither does
        with self.writer.unit() as work:
            result = self.writer.record_in(work, prepared)
            row = decide_in(work.session, sugg, status=status, final=new_final, on_race=judge_race)
        return ReviewResult(row, result.outcome.value)

    def manual_fix(self, fix: ManualFix) -> ReviewResult:
        """Record a correction for a span nothing suggested: its transcript, a validated suggestion and the
        memory write commit together, or nothing does (a retry of the same fix is a replay, counted once)."""
        self._check_final(fix.final)
        prepared = self.writer.prepare(
            CorrectionInput(
                user_id=fix.user_id,
                entity_type=fix.entity_type,
                original=fix.original,
                final=fix.final,
                action="manual",
                transcript_id=fix.transcript_id,
                segment_text=fix.segment_text,
                start_char=fix.start_char,
                end_char=fix.end_char,
            )
        )
        with self.writer.unit() as work:
            self.writer.lock(work, prepared)
            # ownership first: nothing is remembered for a transcript not theirs (ConflictError)
            row = save_manual_in(work.session, fix, self.transcripts.erasure_grace_seconds)
            result = self.writer.record_in(work, prepared, source_suggestion_id=row.id)
        return ReviewResult(row, result.outcome.value)
