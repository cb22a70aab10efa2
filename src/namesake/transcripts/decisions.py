"""The reviewer's decisions as taken (the transcript's history, what undo takes back), and what a decision reads of
its transcript: its language and its segments as analysed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Integer, Text, cast, func, select, tuple_
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.orm import Session

from namesake.adapters import ReviewDecision, SuggestionRow, Transcript
from namesake.core import NotFoundError
from namesake.domain import SuggestionStatus

# The history a transcript shows: its last decisions, newest first.
HISTORY_LIMIT = 200


def decision_json(row: ReviewDecision) -> dict[str, Any]:
    """A decision as the history lists it."""
    return {
        "id": str(row.id),
        "action": row.action,
        "label": row.label,
        "suggestion_ids": list(row.suggestion_ids),
        "scope": row.scope,
        "created_at": _iso(row.created_at),
        "undone_at": _iso(row.undone_at) if row.undone_at else None,
    }


def _iso(when: datetime) -> str:
    return when.isoformat()


@dataclass(frozen=True)
class PairReach:
    """Where one change stands undecided: places in this transcript, and in the owner's other transcripts."""

    original: str
    final: str
    here: int
    elsewhere: int
    other_calls: int


@dataclass
class DecisionLog:
    """The decisions as taken and what a decision reads of its transcript, in the session of its unit of work.

    The review service's `ReviewLog` port, over PostgreSQL.
    """

    session: Session

    def log_decision(
        self, transcript_id: str, *, action: str, label: str, suggestion_ids: list[str], scope: str | None
    ) -> None:
        """One decision as the reviewer took it, for the history and for undo after a reload."""
        self.session.add(ReviewDecision(id=uuid.uuid4(), transcript_id=transcript_id, action=action, label=label,
                                        suggestion_ids=suggestion_ids, scope=scope))  # fmt: skip

    def log_undone(self, transcript_id: str, suggestion_ids: list[str]) -> None:
        """The standing decisions that name any of `suggestion_ids`, marked taken back."""
        standing = self.session.scalars(
            select(ReviewDecision).where(
                ReviewDecision.transcript_id == transcript_id,
                ReviewDecision.undone_at.is_(None),
                ReviewDecision.suggestion_ids.op("&&")(cast(array(suggestion_ids), ARRAY(Text))),
            )
        ).all()
        for row in standing:
            row.undone_at = func.now()

    def history(self, transcript_id: str, limit: int = HISTORY_LIMIT) -> list[dict[str, Any]]:
        """The transcript's decisions, newest first: what each did and whether it was taken back (404 if unknown)."""
        if self.session.get(Transcript, transcript_id) is None:
            raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
        rows = self.session.scalars(
            select(ReviewDecision)
            .where(ReviewDecision.transcript_id == transcript_id)
            .order_by(ReviewDecision.created_at.desc(), ReviewDecision.id)
            .limit(limit)
        ).all()
        return [decision_json(row) for row in rows]

    def language_of(self, transcript_id: str) -> str:
        """The transcript's language as analysed ("en" when it said none or is not registered yet): what makes
        heard words everyday."""
        return self.session.scalar(select(Transcript.language).where(Transcript.id == transcript_id)) or "en"

    def segment_texts(self, transcript_id: str) -> dict[str, str]:
        """The transcript's segments as last analysed, by id (empty when none were kept)."""
        segments = self.session.scalar(select(Transcript.segments).where(Transcript.id == transcript_id)) or []
        return {str(seg.get("id")): str(seg.get("text", "")) for seg in segments}

    def reach(self, transcript_id: str, pairs: list[tuple[str, str]]) -> tuple[list[PairReach], int]:
        """How far deciding each (heard, written) pair reaches, read before the reviewer decides: its open places
        here and in the owner's other calls (those a reject or a lesson changes when analysed again), and how many
        other calls all the pairs touch together. 404 for an unknown transcript."""
        s = self.session
        owner = s.scalar(select(Transcript.user_id).where(Transcript.id == transcript_id))
        if owner is None:
            raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
        if not pairs:
            return [], 0
        heard = func.lower(SuggestionRow.original, type_=Text)
        rows = s.execute(
            select(heard, SuggestionRow.final, SuggestionRow.transcript_id, func.count(type_=Integer))
            .join(Transcript, Transcript.id == SuggestionRow.transcript_id)
            .where(
                Transcript.user_id == owner,
                SuggestionRow.status.in_([SuggestionStatus.PENDING, SuggestionStatus.AUTO_APPLIED]),
                tuple_(heard, SuggestionRow.final).in_({(o.lower(), f) for o, f in pairs}),
            )
            .group_by(heard, SuggestionRow.final, SuggestionRow.transcript_id)
        ).all()
        here: dict[tuple[str, str], int] = {}
        away: dict[tuple[str, str], dict[str, int]] = {}
        for original, final, tid, n in rows:
            if tid == transcript_id:
                here[(str(original), str(final))] = int(n)
            else:
                away.setdefault((str(original), str(final)), {})[str(tid)] = int(n)
        reach = []
        for original, final in pairs:
            key = (original.lower(), final)
            calls = away.get(key, {})
            reach.append(PairReach(original, final, here.get(key, 0), sum(calls.values()), len(calls)))
        return reach, len({tid for calls in away.values() for tid in calls})
