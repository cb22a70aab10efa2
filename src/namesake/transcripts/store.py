"""Users, transcripts and suggestions in PostgreSQL: the one room where their rows are read and written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import DateTime, Row, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, aliased

from namesake.adapters import Database, SuggestionRow, Transcript, json_text
from namesake.core import SEPARATOR, ConflictError, NotFoundError, compact
from namesake.domain import Candidate, CandidateSource, Suggestion, SuggestionStatus
from namesake.users import claim_user, forget_transcript_erasure, hold_collections_shared


def suggestion_of(row: SuggestionRow | Row[Any], signals: dict[str, float] | None = None) -> Suggestion:
    """A persisted suggestion as callers see it (from its ORM row, or a RETURNING row and the signals sent)."""
    return Suggestion(
        id=str(row.id), segment_id=row.segment_id, start_char=row.start_char, end_char=row.end_char,
        original=row.original, final=row.final, entity_type=row.entity_type, confidence=row.confidence,
        status=SuggestionStatus(row.status), source=CandidateSource(row.source),
        signals=row.signals if signals is None else signals,
    )  # fmt: skip


# One statement and one parameter whatever the number of rows: the rows travel as one JSON array that the
# server unpacks (a VALUES list of 13 parameters a row costs more to build and parse than the rows to write).
_UPSERT_SUGGESTIONS = text(
    """
    INSERT INTO suggestions (id, transcript_id, segment_id, start_char, end_char, original, final, entity_type,
                             confidence, signals, status, source, context_phrase)
    SELECT r.id, :transcript_id, r.segment_id, r.start_char, r.end_char, r.original, r.final, r.entity_type,
           r.confidence, r.signals, r.status, r.source, r.context_phrase
    FROM jsonb_to_recordset(CAST(:rows AS jsonb))
         AS r(id uuid, segment_id text, start_char int, end_char int, original text, final text, entity_type text,
              confidence float8, signals jsonb, status text, source text, context_phrase text)
    ON CONFLICT ON CONSTRAINT uq_suggestions_span DO UPDATE
        SET confidence = EXCLUDED.confidence, signals = EXCLUDED.signals, status = EXCLUDED.status
        -- a suggestion the reviewer already decided stays as they left it (and is not returned)
        WHERE suggestions.status = ANY(CAST(:undecided AS text[]))
    RETURNING id, segment_id, start_char, end_char, original, final, entity_type, confidence, status, source
    """
)


def _upsert_rows(cands: list[Candidate], audits: list[dict[str, float]], contexts: list[str]) -> str:
    """The :rows parameter of _UPSERT_SUGGESTIONS: one JSON object a candidate."""
    rows = [
        {
            "id": str(uuid.uuid4()),
            "segment_id": c.segment_id,
            "start_char": c.start_char,
            "end_char": c.end_char,
            "original": c.original,
            "final": c.final,
            "entity_type": c.entity_type,
            "confidence": c.confidence,
            "signals": audit,
            "status": c.disposition.value,
            "source": c.source,
            "context_phrase": context,
        }
        for c, audit, context in zip(cands, audits, contexts, strict=True)
    ]
    return json_text(rows)


def _upsert_in(s: Session, transcript_id: str, cands: list[Candidate], contexts: list[str]) -> list[Suggestion]:
    """The candidates upserted; those written (a decided span key is left as it is, and not returned)."""
    undecided = [status.value for status in SuggestionStatus.undecided()]
    audits = [c.audit() for c in cands]
    params = {"transcript_id": transcript_id, "rows": _upsert_rows(cands, audits, contexts), "undecided": undecided}
    returned = s.execute(_UPSERT_SUGGESTIONS, params).all()
    # a returned row was written from the candidate of its span key: its signals are the ones sent
    sent = {(c.segment_id, c.start_char, c.end_char, c.final): a for c, a in zip(cands, audits, strict=True)}
    return [suggestion_of(r, sent[(r.segment_id, r.start_char, r.end_char, r.final)]) for r in returned]


def _decided_spans_in(s: Session, transcript_id: str) -> dict[str, list[tuple[int, int]]]:
    """The words a reviewer decided on (accepted, edited, fixed by hand or rejected), by segment."""
    rows = s.execute(
        select(SuggestionRow.segment_id, SuggestionRow.start_char, SuggestionRow.end_char).where(
            SuggestionRow.transcript_id == transcript_id,
            SuggestionRow.status.not_in(SuggestionStatus.undecided()),
        )
    ).all()
    out: dict[str, list[tuple[int, int]]] = {}
    for segment_id, start, end in rows:
        out.setdefault(segment_id, []).append((start, end))
    return out


def _covers(decided: dict[str, list[tuple[int, int]]], c: Candidate) -> bool:
    """A candidate over words a reviewer already decided on: their decision stands."""
    return any(a < c.end_char and b > c.start_char for a, b in decided.get(c.segment_id, ()))


def ensure_transcript(s: Session, transcript_id: str, user_id: str, language: str | None, grace_seconds: int) -> bool:
    """Claim the user (users.claim_user), create the transcript row on first reference; one user owns it.
    Whether this call created it."""
    claim_user(s, user_id, grace_seconds)
    created = s.scalar(
        insert(Transcript)
        .values(id=transcript_id, user_id=user_id, language=language)
        .on_conflict_do_nothing()
        .returning(Transcript.id)
    )
    if created is not None:  # a new transcript of an erased one's id is another transcript
        forget_transcript_erasure(s, transcript_id)
    owner = s.scalar(select(Transcript.user_id).where(Transcript.id == transcript_id))
    if owner != user_id:
        raise ConflictError(f"transcript {transcript_id!r} belongs to another user", field="transcript_id")
    return created is not None


@dataclass(frozen=True)
class TranscriptView:
    """A transcript as the reviewer reads it: its segments as analysed and every suggestion on them."""

    transcript_id: str
    user_id: str
    language: str | None
    analyzed_at: str | None
    segments: list[dict[str, Any]]
    suggestions: list[Suggestion]

    def as_json(self) -> dict[str, Any]:
        """The body of GET /v1/transcripts/{id}."""
        return {
            "transcript_id": self.transcript_id, "user_id": self.user_id, "language": self.language,
            "analyzed_at": self.analyzed_at, "segments": self.segments,
            "suggestions": [s.as_json() for s in self.suggestions],
        }  # fmt: skip


class TranscriptStore:
    """The transcripts repository: registration and ownership, suggestions saved, listed and decided."""

    def __init__(self, db: Database, erasure_grace_seconds: int) -> None:
        self.db, self.erasure_grace_seconds = db, erasure_grace_seconds

    def register(self, transcript_id: str, user_id: str, language: str | None = None) -> None:
        """Create the user and transcript on first reference; ConflictError when it is another user's."""
        with self.registered(transcript_id, user_id, language):
            pass

    @contextmanager
    def registered(self, transcript_id: str, user_id: str, language: str | None = None) -> Iterator[Session]:
        """The transcript registered for its user, in a unit that commits when the block ends.

        The block runs under the user's claim: what it creates for the transcript (its collection) is
        there before erasure or deletion can look for it, and with the row that owns it. `s.info["created"]` says
        whether this unit created the transcript.
        """
        with self.db.session() as s:
            s.info["created"] = ensure_transcript(s, transcript_id, user_id, language, self.erasure_grace_seconds)
            hold_collections_shared(s)
            yield s  # the unit's session: what else the caller reads for this transcript, in one transaction

    def save_suggestions(
        self,
        transcript_id: str,
        cands: list[Candidate],
        contexts: list[str] | None = None,
        segments: list[dict[str, Any]] | None = None,
        *,
        user_id: str | None = None,
    ) -> list[Suggestion]:
        """What the run proposes saved beside what the reviewer decided: every suggestion of the transcript now.

        One upsert on the span key: a re-analysis refreshes open suggestions and never reopens a decided one.
        A reviewer's decision stands: nothing new is proposed over words they decided on. The open suggestions of an
        earlier run that this run does not propose (a pair refused since, a correction forgotten, a list
        changed) are gone. The segments are kept with them, in the same transaction.
        """
        contexts = contexts or [""] * len(cands)
        with self.db.session() as s:
            if user_id is not None:  # erased while it was analysed: 410, as any write after an erasure
                claim_user(s, user_id, self.erasure_grace_seconds, register=False)
            if segments is not None:
                keep = update(Transcript).where(Transcript.id == transcript_id)
                if s.execute(keep.values(segments=segments, analyzed_at=func.now())).rowcount == 0:  # type: ignore[attr-defined]
                    raise NotFoundError(
                        f"transcript {transcript_id!r} was deleted while it was being analysed: nothing saved",
                        field="transcript_id",
                    )
            decided_spans = _decided_spans_in(s, transcript_id)
            kept = [(c, x) for c, x in zip(cands, contexts, strict=True) if not _covers(decided_spans, c)]
            returned = _upsert_in(s, transcript_id, [c for c, _ in kept], [x for _, x in kept]) if kept else []
            gone = delete(SuggestionRow).where(
                SuggestionRow.transcript_id == transcript_id,
                SuggestionRow.status.in_(SuggestionStatus.undecided()),
                SuggestionRow.id.not_in([uuid.UUID(r.id) for r in returned]),
            )
            s.execute(gone)
            decided = s.scalars(
                select(SuggestionRow).where(
                    SuggestionRow.transcript_id == transcript_id,
                    SuggestionRow.status.not_in(SuggestionStatus.undecided()),
                )
            ).all()
            out = [*returned, *(suggestion_of(r) for r in decided)]
        return sorted(out, key=lambda r: (r.segment_id, r.start_char))

    def list_suggestions(self, transcript_id: str) -> list[Suggestion]:
        """Every suggestion of a transcript, in text order."""
        with self.db.session() as s:
            rows = s.scalars(
                select(SuggestionRow)
                .where(SuggestionRow.transcript_id == transcript_id)
                .order_by(SuggestionRow.segment_id, SuggestionRow.start_char)
            ).all()
            return [suggestion_of(r) for r in rows]

    def list_transcripts(
        self,
        *,
        tenant: str | None,
        user_id: str | None = None,
        pending_only: bool = False,
        limit: int = 100,
        offset: int = 0,
        fold_below: float = 0.0,
    ) -> list[dict[str, Any]]:
        """The review queue: transcripts with their suggestion counts, last analysed first.

        One tenant's (or, for tenant None, the default namespace's), or one stored user's when named. `to_decide`
        counts the pending ones the page shows unfolded (confidence ≥ `fold_below`): what its badge says.
        """
        query, counts, when = _queue(tenant, user_id, fold_below)
        if pending_only:
            query = query.where(counts.c.pending_count > 0)
        Row = tuple[str, str, datetime, int | None, int | None, int | None, int | None]
        with self.db.session() as s:
            rows = cast(
                list[Row], s.execute(query.order_by(when.desc(), Transcript.id).offset(offset).limit(limit)).all()
            )
        return [
            {"transcript_id": t, "user_id": u, "analyzed_at": w.isoformat(),
             "counts": {SuggestionStatus.PENDING.value: p or 0, SuggestionStatus.AUTO_APPLIED.value: a or 0,
                        "total": n or 0, "to_decide": d or 0}}
            for t, u, w, p, a, n, d in rows
        ]  # fmt: skip

    def progress(self, *, tenant: str | None, user_id: str | None = None, fold_below: float = 0.0) -> dict[str, int]:
        """How far review has gone over the queue: transcripts with suggestions, and those with none left to decide, the
        folded ones included (a transcript is reviewed once its fold was seen and decided, as the page says)."""
        query, counts, _ = _queue(tenant, user_id, fold_below)
        inner = query.where(counts.c.total > 0).subquery()
        with self.db.session() as s:
            total, left = s.execute(
                select(func.count(), func.count().filter(inner.c.pending_count > 0)).select_from(inner)
            ).one()
        return {"transcripts": total, "reviewed": total - left, "to_review": left}

    def transcript_view(self, transcript_id: str) -> TranscriptView:
        """A transcript as the reviewer reads it: segment texts as analysed, and every suggestion on them."""
        with self.db.session() as s:
            row = s.get(Transcript, transcript_id)
            if row is None:
                raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
            analyzed_at = row.analyzed_at.isoformat() if row.analyzed_at else None
            head = (row.id, row.user_id, row.language, analyzed_at, list(row.segments or []))
        return TranscriptView(*head, self.list_suggestions(transcript_id))


def transcript_ids_in(s: Session, user_id: str | None = None) -> list[str]:
    """Every transcript's id, or one user's: what erasure and the orphan sweep walk."""
    query = select(Transcript.id)
    if user_id is not None:
        query = query.where(Transcript.user_id == user_id)
    return list(s.scalars(query))


def user_row_counts_in(s: Session, user_id: str) -> dict[str, int]:
    """How many transcripts and suggestions a user holds: what an erasure receipt counts of this store."""
    transcripts = select(Transcript.id).where(Transcript.user_id == user_id)
    return {
        "transcripts": int(s.scalar(select(func.count()).select_from(transcripts.subquery())) or 0),
        "suggestions": int(s.scalar(select(func.count()).where(SuggestionRow.transcript_id.in_(transcripts))) or 0),
    }


def rejected_pairs_in(s: Session, user_id: str) -> list[tuple[str, str, datetime | None, str, float | None]]:
    """Every pair the user rejected, with when, the words around it and how the language model read it there:
    (original, final, decided at, context, lm_gain or None), what their refusals are made of. A suggestion a fix by
    hand displaced and agrees with ("line" → Ryan under "line Cole" → Ryan Cole) was not refused: the reviewer wrote
    it out whole."""
    fix = aliased(SuggestionRow)
    rows = s.execute(
        select(
            SuggestionRow.original,
            SuggestionRow.final,
            SuggestionRow.decided_at,
            SuggestionRow.context_phrase,
            SuggestionRow.signals,
            fix.final.label("fix_final"),
        )
        .join(Transcript, Transcript.id == SuggestionRow.transcript_id)
        .outerjoin(fix, (fix.id == SuggestionRow.taught_with) & (fix.source == CandidateSource.MANUAL))
        .where(Transcript.user_id == user_id, SuggestionRow.status == SuggestionStatus.REJECTED)
    ).all()
    return [
        (r.original, r.final, r.decided_at, r.context_phrase, _gain(r.signals))
        for r in rows
        if r.fix_final is None or compact(r.final) not in compact(r.fix_final)
    ]


def _gain(signals: dict[str, Any] | None) -> float | None:
    """The language model's gain a stored suggestion was read with, if it was read."""
    gain = (signals or {}).get("lm_gain")
    return None if gain is None else float(gain)


def _queue(tenant: str | None, user_id: str | None, fold_below: float) -> tuple[Any, Any, Any]:
    """The queue's rows (transcript, user, when, counts) for one tenant or user, its counts and its date column."""
    status = SuggestionRow.status
    pending = status == SuggestionStatus.PENDING
    counts = (
        select(
            SuggestionRow.transcript_id,
            func.count().filter(pending).label("pending_count"),
            func.count().filter(status == SuggestionStatus.AUTO_APPLIED).label("auto_applied_count"),
            func.count().label("total"),
            func.count().filter(pending, SuggestionRow.confidence >= fold_below).label("to_decide_count"),
        )
        .group_by(SuggestionRow.transcript_id)
        .subquery()
    )
    when = func.coalesce(Transcript.analyzed_at, Transcript.created_at, type_=DateTime(timezone=True))
    query = select(
        Transcript.id, Transcript.user_id, when, counts.c.pending_count, counts.c.auto_applied_count, counts.c.total,
        counts.c.to_decide_count,
    ).outerjoin(counts, counts.c.transcript_id == Transcript.id)  # fmt: skip
    if user_id is not None:
        query = query.where(Transcript.user_id == user_id)
    elif tenant is not None:
        query = query.where(Transcript.user_id.startswith(f"{tenant}{SEPARATOR}"))
    else:
        query = query.where(~Transcript.user_id.contains(SEPARATOR))
    return query, counts, when
