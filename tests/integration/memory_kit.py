"""The corrections memory's test kit: a writer, a correction, a candidate, and what the two stores hold."""

from __future__ import annotations

from sqlalchemy import select

from namesake.adapters.models import CorrectionMirror
from namesake.adapters.runtime import Runtime
from namesake.adapters.vectors.base import Filter, Match
from namesake.core.settings import CORRECTIONS_COLLECTION
from namesake.corrections_memory.writer import CorrectionInput, CorrectionsMemoryWriter
from namesake.domain.types import Candidate
from tests.conftest import tuned


def writer_of(rt: Runtime, **overrides: object) -> CorrectionsMemoryWriter:
    """A writer on the runtime's stores, its settings tuned where a test says so."""
    settings = tuned(rt.settings, **overrides) if overrides else rt.settings
    return CorrectionsMemoryWriter(rt.db, rt.vectors, rt.embedder, settings)


def correction(user: str = "u1", original: str = "Mitnou", final: str = "MeetNoo", **kw: object) -> CorrectionInput:
    """A fix of Mitnou to MeetNoo by u1 unless told otherwise."""
    return CorrectionInput(user_id=user, entity_type=str(kw.pop("entity_type", "ORG")), original=original, final=final,
                           **kw)  # type: ignore[arg-type]  # fmt: skip


def candidate(original: str, final: str = "?", entity_type: str = "ORG") -> Candidate:
    """A candidate spanning the whole original, its final unknown until the memory says."""
    return Candidate("1", 0, len(original), original, final, entity_type, "rag")


def point_count(rt: Runtime, user: str | None = None) -> int:
    """The vector points of the corrections collection, of one user or all."""
    flt = Filter(must=(Match("user_id", user),)) if user else None
    return rt.vectors.count(CORRECTIONS_COLLECTION, flt)


def active_rows(rt: Runtime) -> list[CorrectionMirror]:
    """The mirror's active rows, every user's."""
    with rt.db.session() as s:
        return list(s.scalars(select(CorrectionMirror).where(CorrectionMirror.status == "active")).all())
