"""An in-memory review unit of work: the suggestion rows and the memory as the service's ports see them.

It keeps the stores' rules a service relies on (a row lock's race, a fix by hand displacing open suggestions,
a clash of finals on a span, one transaction: on an error nothing changed), so that the service's own rules
can be tested without PostgreSQL. The same rules on the real stores: tests/e2e/test_undo_and_groups.py.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from namesake.core.errors import ConflictError, NotFoundError
from namesake.core.text import normalise
from namesake.corrections_memory.unteach import UnteachOutcome
from namesake.corrections_memory.writer import CorrectionInput, validate_correction
from namesake.domain.types import CandidateSource, Suggestion, SuggestionStatus
from namesake.transcripts.decisions import PairReach
from namesake.transcripts.store import TranscriptView
from namesake.transcripts.suggestions import ManualFix, StoredSuggestion, Undone


@dataclass
class Row:
    """A suggestion row, with what a decision keeps for undo."""

    id: uuid.UUID
    transcript_id: str
    user_id: str
    segment_id: str
    start_char: int
    end_char: int
    original: str
    final: str
    entity_type: str = "PERSON"
    status: SuggestionStatus = SuggestionStatus.PENDING
    source: CandidateSource = CandidateSource.LISTS
    signals: dict[str, float] = field(default_factory=dict)
    context_phrase: str = ""
    previous_status: SuggestionStatus | None = None
    proposed_final: str | None = None
    proposed_entity_type: str | None = None
    taught_with: uuid.UUID | None = None

    def suggestion(self) -> Suggestion:
        return Suggestion(
            self.segment_id, self.start_char, self.end_char, self.original, self.final, self.entity_type,
            str(self.id), 0.5, self.status, self.source, dict(self.signals),
        )  # fmt: skip

    def stored(self) -> StoredSuggestion:
        return StoredSuggestion(
            self.id, self.user_id, self.transcript_id, self.original, self.final, self.entity_type, self.status,
            self.context_phrase, self.suggestion(),
        )  # fmt: skip


@dataclass
class Taught:
    """A remembered correction: the pair, and the decisions that taught it."""

    user_id: str
    original: str
    final: str
    sources: list[str]


@dataclass
class State:
    """Everything the fake stores hold; copied at a unit's start, put back when it fails."""

    rows: dict[uuid.UUID, Row] = field(default_factory=dict)
    memory: list[Taught] = field(default_factory=list)
    segments: dict[str, dict[str, str]] = field(default_factory=dict)  # transcript → segment id → text
    decisions: list[dict[str, Any]] = field(default_factory=list)  # as taken, oldest first


class FakeRows:
    """The suggestion rows of one unit."""

    def __init__(self, state: State, grace_seconds: int = 0) -> None:
        self.state = state

    def load(self, suggestion_ids: list[str], transcript_id: str) -> list[StoredSuggestion]:
        out = []
        for sid in suggestion_ids:
            row = self.state.rows.get(uuid.UUID(sid))
            if row is None or row.transcript_id != transcript_id:
                raise NotFoundError(f"suggestion {sid!r} not found in transcript {transcript_id!r}")
            out.append(row.stored())
        return out

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
        row = self.state.rows[seen.id]
        if row.status != seen.status:
            on_race(row.status, row.final)
            return row.suggestion()
        row.previous_status, row.proposed_final, row.proposed_entity_type = row.status, row.final, row.entity_type
        row.taught_with, row.status, row.final = taught_with, status, final
        row.entity_type = entity_type or row.entity_type
        return row.suggestion()

    def save_manual(self, fix: ManualFix, *, taught_with: uuid.UUID | None = None, shares: bool = False) -> Suggestion:
        fix_id = uuid.uuid4()
        touching = [
            r for r in self.state.rows.values()
            if r.transcript_id == fix.transcript_id and r.segment_id == fix.segment_id
            and r.start_char < fix.end_char and r.end_char > fix.start_char
        ]  # fmt: skip
        for r in touching:
            if r.status == SuggestionStatus.VALIDATED:
                raise ConflictError(f"the words hold the accepted “{r.original} → {r.final}”: undo it first")
        for r in touching:
            r.previous_status, r.proposed_final, r.taught_with = r.status, r.final, fix_id
            r.status = SuggestionStatus.REJECTED
        row = Row(
            fix_id, fix.transcript_id, fix.user_id, fix.segment_id, fix.start_char, fix.end_char, fix.original,
            fix.final, fix.entity_type, SuggestionStatus.VALIDATED, CandidateSource.MANUAL, {"manual": 1.0},
        )  # fmt: skip
        if shares:
            row.taught_with = taught_with or fix_id
        self.state.rows[fix_id] = row
        return row.suggestion()

    def language_of(self, transcript_id: str) -> str:
        return "en"

    def segment_texts(self, transcript_id: str) -> dict[str, str]:
        return dict(self.state.segments.get(transcript_id, {}))

    def reach(self, transcript_id: str, pairs: list[tuple[str, str]]) -> tuple[list[PairReach], int]:
        owner = next((r.user_id for r in self.state.rows.values() if r.transcript_id == transcript_id), None)
        if owner is None:
            raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
        open_ = [
            r
            for r in self.state.rows.values()
            if r.user_id == owner and r.status in (SuggestionStatus.PENDING, SuggestionStatus.AUTO_APPLIED)
        ]
        reach, touched = [], set()
        for original, final in pairs:
            same = [r for r in open_ if r.original.lower() == original.lower() and r.final == final]
            away = [r for r in same if r.transcript_id != transcript_id]
            touched |= {r.transcript_id for r in away}
            reach.append(
                PairReach(original, final, len(same) - len(away), len(away), len({r.transcript_id for r in away}))
            )
        return reach, len(touched)

    def log_decision(
        self, transcript_id: str, *, action: str, label: str, suggestion_ids: list[str], scope: str | None
    ) -> None:
        self.state.decisions.append({"transcript_id": transcript_id, "action": action, "label": label,
                                     "suggestion_ids": suggestion_ids, "scope": scope, "undone": False})  # fmt: skip

    def log_undone(self, transcript_id: str, suggestion_ids: list[str]) -> None:
        for d in self.state.decisions:
            if d["transcript_id"] == transcript_id and set(d["suggestion_ids"]) & set(suggestion_ids):
                d["undone"] = True

    def history(self, transcript_id: str) -> list[dict[str, Any]]:
        found = [d for d in reversed(self.state.decisions) if d["transcript_id"] == transcript_id]
        if not found and not any(r.transcript_id == transcript_id for r in self.state.rows.values()):
            raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
        return found

    def teaching(self, decided: list[StoredSuggestion]) -> set[uuid.UUID]:
        rows = [self.state.rows.get(x.id) for x in decided]
        return {r.taught_with or r.id for r in rows if r is not None and r.status == SuggestionStatus.VALIDATED}

    def still_standing(self, leads: set[uuid.UUID], leaving: list[StoredSuggestion]) -> set[uuid.UUID]:
        gone = {x.id for x in leaving}
        return {
            r.taught_with for r in self.state.rows.values()
            if r.taught_with in leads and r.status == SuggestionStatus.VALIDATED and r.id not in gone
        }  # fmt: skip

    def undo(self, seen: StoredSuggestion) -> Undone:
        row = self.state.rows.get(seen.id)
        if row is None or row.status != seen.status:
            raise ConflictError(f"suggestion {seen.id} changed while it was being undone: try again")
        if row.source != CandidateSource.MANUAL:
            _put_back(row)
            return Undone(False, [])
        restored = []
        for other in list(self.state.rows.values()):
            if other.taught_with == row.id and other.status == SuggestionStatus.REJECTED:
                _put_back(other)
                restored.append(other.suggestion())
        del self.state.rows[row.id]
        return Undone(True, restored)

    def settle(self, suggestion_ids: list[uuid.UUID]) -> dict[uuid.UUID, Suggestion]:
        spans = [(r.transcript_id, r.segment_id, r.start_char, r.end_char, r.final) for r in self.state.rows.values()]
        if len(spans) != len(set(spans)):
            raise ConflictError("another suggestion of this span already has the proposed final")
        return {i: self.state.rows[i].suggestion() for i in suggestion_ids if i in self.state.rows}


def _put_back(row: Row) -> None:
    row.status = row.previous_status or SuggestionStatus.PENDING
    row.final = row.proposed_final or row.final
    row.entity_type = row.proposed_entity_type or row.entity_type
    row.previous_status = row.proposed_final = row.proposed_entity_type = row.taught_with = None


class FakeMemory:
    """The corrections memory of one unit: one remembered pair per user and original, counted by decision."""

    def __init__(self, state: State, fail_next: list[Exception]) -> None:
        self.state, self.fail_next = state, fail_next
        self.locked: list[str] = []

    def lock(self, prepared: CorrectionInput) -> None:
        self.locked.append(prepared.original_norm)

    def record(self, prepared: CorrectionInput, *, source_suggestion_id: str | None = None) -> str:
        if self.fail_next:
            raise self.fail_next.pop()
        c = prepared
        source = source_suggestion_id or c.source_suggestion_id or ""
        for t in self.state.memory:
            if t.user_id == c.user_id and normalise(t.original) == prepared.original_norm:
                if source in t.sources:
                    return "replay"
                if t.final != c.final:
                    t.final, t.sources = c.final, [source]
                    return "superseded"
                t.sources.append(source)
                return "reinforced"
        self.state.memory.append(Taught(c.user_id, c.original, c.final, [source]))
        return "new"

    def unteach(self, *, user_id: str, suggestion_id: str) -> UnteachOutcome | None:
        for t in self.state.memory:
            if t.user_id == user_id and suggestion_id in t.sources:
                t.sources.remove(suggestion_id)
                if t.sources:
                    return UnteachOutcome.REDUCED
                self.state.memory.remove(t)
                return UnteachOutcome.UNTAUGHT
        return None


@dataclass
class FakeUnit:
    """Rows, log and memory of one transaction (the fake rows keep the decision log too)."""

    rows: FakeRows
    log: FakeRows
    memory: FakeMemory


class FakeReviewUnitOfWork:
    """Units over one in-memory state: committed at the block's end, put back as it was on any error."""

    def __init__(self, max_final_chars: int = 200) -> None:
        self.state = State()
        self.max_final_chars = max_final_chars
        self.fail_next: list[Exception] = []
        self.units = 0

    def prepare(self, correction: CorrectionInput) -> CorrectionInput:
        c = validate_correction(correction, self.max_final_chars)
        return replace(c, vector=(0.0,))

    @contextmanager
    def begin(self) -> Iterator[FakeUnit]:
        saved = copy.deepcopy(self.state)
        self.units += 1
        try:
            rows = FakeRows(self.state)
            yield FakeUnit(rows, rows, FakeMemory(self.state, self.fail_next))
        except Exception:
            self.state.rows, self.state.memory = saved.rows, saved.memory
            raise

    def add(self, original: str, final: str, *, transcript_id: str = "t1", user_id: str = "ana", **kw: object) -> str:
        """A suggestion the pipeline left, at the next free span of segment 1."""
        start = sum(len(r.original) + 1 for r in self.state.rows.values())
        row = Row(uuid.uuid4(), transcript_id, user_id, "1", start, start + len(original), original, final, **kw)  # type: ignore[arg-type]
        self.state.rows[row.id] = row
        return str(row.id)

    def row(self, suggestion_id: str) -> Row:
        return self.state.rows[uuid.UUID(suggestion_id)]


@dataclass
class FakeQueueRows:
    """The queue's reads over the same in-memory state: transcripts, their counts and their views.

    The transcripts store's counting on PostgreSQL (the fold, tenants, paging) is tested through the API in
    tests/e2e/test_undo_and_groups.py; this one keeps the fold's rule so that the queue's own can be tested.
    """

    state: State
    confidence: dict[uuid.UUID, float] = field(default_factory=dict)  # a row's sureness (0.5 unless set)

    def _of(self, transcript_id: str) -> list[Row]:
        return [r for r in self.state.rows.values() if r.transcript_id == transcript_id]

    def list_transcripts(
        self, *, tenant: str | None, user_id: str | None, pending_only: bool, limit: int, offset: int,
        fold_below: float,
    ) -> list[dict[str, Any]]:  # fmt: skip
        out = []
        for tid in sorted({r.transcript_id for r in self.state.rows.values()}):
            rows = [r for r in self._of(tid) if user_id is None or r.user_id == user_id]
            pending = [r for r in rows if r.status == SuggestionStatus.PENDING]
            if not rows or (pending_only and not pending):
                continue
            above = [r for r in pending if self.confidence.get(r.id, 0.5) >= fold_below]
            out.append({"transcript_id": tid, "user_id": rows[0].user_id,
                        "counts": {"pending": len(pending), "total": len(rows), "to_decide": len(above)}})  # fmt: skip
        return out[offset : offset + limit]

    def progress(self, *, tenant: str | None, user_id: str | None, fold_below: float) -> dict[str, int]:
        listed = self.list_transcripts(tenant=tenant, user_id=user_id, pending_only=False, limit=10**6, offset=0,
                                       fold_below=fold_below)  # fmt: skip
        reviewed = sum(1 for t in listed if t["counts"]["pending"] == 0)
        return {"transcripts": len(listed), "reviewed": reviewed, "to_review": len(listed) - reviewed}

    def transcript_view(self, transcript_id: str) -> TranscriptView:
        rows = self._of(transcript_id)
        if not rows and transcript_id not in self.state.segments:
            raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
        segments = [{"id": k, "text": v} for k, v in self.state.segments.get(transcript_id, {}).items()]
        user = rows[0].user_id if rows else "ana"
        return TranscriptView(transcript_id, user, "en", None, segments, self.list_suggestions(transcript_id))

    def list_suggestions(self, transcript_id: str) -> list[Suggestion]:
        return [r.suggestion() for r in sorted(self._of(transcript_id), key=lambda r: (r.segment_id, r.start_char))]
