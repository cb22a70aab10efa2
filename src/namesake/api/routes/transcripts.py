"""Transcripts: index canonical entities, analyse, list suggestions."""

from __future__ import annotations

from fastapi import APIRouter, Path

from namesake.api.deps import ServicesDep
from namesake.api.schemas import AnalysisOut, CanonicalEntitiesIn, IndexedOut, SuggestionOut
from namesake.reliability.inputs import Identifier, TranscriptIn

router = APIRouter(prefix="/v1", tags=["reliability"])
TranscriptId = Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=200)


@router.put("/transcripts/{transcript_id}/canonical-entities")
def put_canonical_entities(
    services: ServicesDep, body: CanonicalEntitiesIn, transcript_id: Identifier = TranscriptId
) -> IndexedOut:
    """Replace the canonical entities of a transcript (its collection in the vector store)."""
    lists = body.lists()
    services.reliability.register(transcript_id, body.user_id)
    chunks = services.reliability.index_entities(transcript_id, lists)
    return IndexedOut(transcript_id=transcript_id, chunks=chunks, values=sum(len(v) for v in lists.values()))


@router.post("/reliability/analyze")
def analyze(services: ServicesDep, body: TranscriptIn) -> AnalysisOut:
    """Analyse one transcript: suggestions with confidence and status, and the run's stats."""
    result = services.reliability.analyze(body)
    services.metrics.observe_analysis(result.stats)
    return AnalysisOut.model_validate(result.as_json())


@router.get("/transcripts/{transcript_id}/suggestions")
def list_suggestions(services: ServicesDep, transcript_id: Identifier = TranscriptId) -> list[SuggestionOut]:
    """Every suggestion of the transcript, in text order."""
    return [SuggestionOut.model_validate(s) for s in services.reliability.list_suggestions(transcript_id)]
