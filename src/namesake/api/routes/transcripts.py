"""Transcripts: index canonical entities, analyse, list suggestions (all within the key's tenant)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path

from namesake.api.deps import ScopeDep, ServicesDep
from namesake.api.schemas import AnalysisOut, CanonicalEntitiesIn, IndexedOut, SuggestionOut
from namesake.reliability.inputs import ID_PATTERN, Identifier, TranscriptIn

router = APIRouter(prefix="/v1", tags=["reliability"])
TranscriptId = Path(pattern=ID_PATTERN, max_length=233)


@router.put("/transcripts/{transcript_id}/canonical-entities")
def put_canonical_entities(
    services: ServicesDep, scope: ScopeDep, body: CanonicalEntitiesIn, transcript_id: Identifier = TranscriptId
) -> IndexedOut:
    """Replace the canonical entities of a transcript (its collection in the vector store)."""
    lists = body.lists()
    stored_id = scope.inward(transcript_id, "transcript_id")
    services.reliability.register(stored_id, scope.user(body.user_id))
    chunks = services.reliability.index_entities(stored_id, lists)
    return IndexedOut(transcript_id=transcript_id, chunks=chunks, values=sum(len(v) for v in lists.values()))


@router.post("/reliability/analyze")
def analyze(services: ServicesDep, scope: ScopeDep, body: TranscriptIn) -> AnalysisOut:
    """Analyse one transcript: suggestions with confidence and status, and the run's stats."""
    stored = body.model_copy(
        update={
            "transcript_id": scope.inward(body.transcript_id, "transcript_id"),
            "user_id": scope.user(body.user_id),
        }
    )
    result = services.reliability.analyze(stored)
    services.metrics.observe_analysis(result.stats)
    return AnalysisOut.model_validate(scope.outward_json(result.as_json()))


@router.get("/transcripts/{transcript_id}/suggestions")
def list_suggestions(
    services: ServicesDep, scope: ScopeDep, transcript_id: Identifier = TranscriptId
) -> list[SuggestionOut]:
    """Every suggestion of the transcript, in text order (another tenant's transcript: empty)."""
    rows: list[dict[str, Any]] = services.reliability.list_suggestions(scope.inward(transcript_id, "transcript_id"))
    return [SuggestionOut.model_validate(s) for s in rows]
