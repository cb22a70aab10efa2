"""The review queue as a reviewer reads it: which transcripts wait, how far review has gone, one transcript's view
and its text as reviewed, and a transcript taken out of every store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from namesake.domain import Suggestion, SuggestionStatus
from namesake.reliability import Completion, completion, listed
from namesake.review.reviewed import ReviewedTranscript, TimedSegment, as_reviewed
from namesake.transcripts import TranscriptDeletion, TranscriptView


class QueueRows(Protocol):
    """What the queue reads of the transcripts store (`transcripts.TranscriptStore` over PostgreSQL)."""

    def list_transcripts(
        self, *, tenant: str | None, user_id: str | None, pending_only: bool, limit: int, offset: int,
        fold_below: float,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Transcripts last analysed first, with their suggestion counts (`to_decide`: pending above the fold)."""
        ...

    def progress(self, *, tenant: str | None, user_id: str | None, fold_below: float) -> dict[str, int]:
        """Transcripts with suggestions, and those with none left to decide, the fold included."""
        ...

    def transcript_view(self, transcript_id: str) -> TranscriptView:
        """The segments as analysed and every suggestion (NotFoundError for an unknown transcript)."""
        ...

    def list_suggestions(self, transcript_id: str) -> list[Suggestion]:
        """Every suggestion of a transcript, in text order."""
        ...


@dataclass
class ReviewQueue:
    """The queue's reads with the page's fold applied, and the deletion of a transcript."""

    rows: QueueRows
    fold_below: float  # pending suggestions below it are folded: not counted as waiting until the fold is seen
    delete: Callable[[str], TranscriptDeletion]  # the transcript, its suggestions and its canonical entities
    values: Callable[[str], list[str]]  # the transcript's list values, as its analysis read them

    def completions(self, view: TranscriptView) -> dict[str, Completion]:
        """The half fixes of a transcript the reviewer may complete in place, by suggestion id (`reliability.whole`):
        open, accepted or made by hand, whose list value goes on in the words heard beside them."""
        open_or_taken = [s for s in view.suggestions if s.status != SuggestionStatus.REJECTED]
        if not open_or_taken:
            return {}
        index = listed(self.values(view.transcript_id))
        texts = {str(seg.get("id")): str(seg.get("text", "")) for seg in view.segments}
        out = {}
        for s in open_or_taken:
            whole = completion(texts.get(s.segment_id, ""), s.start_char, s.end_char, s.final, index, s.original)
            if whole is not None:
                out[s.id] = whole
        return out

    def list_transcripts(
        self, *, tenant: str | None, user_id: str | None, pending_only: bool, limit: int, offset: int
    ) -> list[dict[str, Any]]:
        """The review queue: transcripts last analysed first, with their pending and auto-applied counts."""
        return self.rows.list_transcripts(
            tenant=tenant, user_id=user_id, pending_only=pending_only, limit=limit, offset=offset,
            fold_below=self.fold_below,
        )  # fmt: skip

    def progress(self, *, tenant: str | None, user_id: str | None) -> dict[str, int]:
        """How many of the queue's transcripts have nothing left to decide, their folds included."""
        return self.rows.progress(tenant=tenant, user_id=user_id, fold_below=self.fold_below)

    def transcript_view(self, transcript_id: str) -> TranscriptView:
        """A transcript as the reviewer reads it: its segments as analysed and every suggestion."""
        return self.rows.transcript_view(transcript_id)

    def list_suggestions(self, transcript_id: str) -> list[Suggestion]:
        """Every suggestion of a transcript, in text order."""
        return self.rows.list_suggestions(transcript_id)

    def reviewed(self, transcript_id: str) -> ReviewedTranscript:
        """The transcript with what stands written in (applied, accepted, edited, fixed by hand) and what is open."""
        view = self.rows.transcript_view(transcript_id)
        return as_reviewed(view.transcript_id, [TimedSegment.of(s) for s in view.segments], view.suggestions)
