"""Transcripts: index canonical entities, analyse, list suggestions (all within the key's tenant)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from pydantic import ValidationError

from namesake.analysis import Engine, TranscriptIn, as_namesake, field_of, fixes_of, write_back
from namesake.api.connected import while_connected
from namesake.api.deps import ScopeDep, ServicesDep, TranscriptId
from namesake.api.schemas import (
    AnalysisOut,
    CanonicalEntitiesIn,
    EngineAnalysisOut,
    IndexedOut,
    ReviewedOut,
    SuggestionOut,
    TranscriptDeletionOut,
    TranscriptOut,
    TranscriptSummaryOut,
    errors,
)
from namesake.app import Services
from namesake.core import InvalidInputError, Scope
from namesake.domain import Identifier
from namesake.review import TextFormat, render

router = APIRouter(prefix="/v1", tags=["reliability"])


@router.put("/transcripts/{transcript_id}/canonical-entities", responses=errors(409, 410, 413, 415))
def put_canonical_entities(
    services: ServicesDep, scope: ScopeDep, body: CanonicalEntitiesIn, transcript_id: Identifier = TranscriptId
) -> IndexedOut:
    """Replace the canonical entities of a transcript (its collection in the vector store)."""
    lists = body.lists()
    stored_id = scope.inward(transcript_id, "transcript_id")
    chunks = services.analysis.index_entities(stored_id, scope.user(body.user_id), lists)
    return IndexedOut(transcript_id=transcript_id, chunks=chunks, values=sum(len(v) for v in lists.values()))


@router.post("/reliability/analyze", responses=errors(409, 410, 413, 415, 503))
async def analyze(request: Request, services: ServicesDep, scope: ScopeDep, body: TranscriptIn) -> AnalysisOut:
    """Analyse one transcript: suggestions with confidence and status, and the run's stats.

    A client that disconnects before the answer stops the analysis at its next step: nothing of it is saved."""
    return await _analyze(request, services, scope, body)


async def _analyze(request: Request, services: Services, scope: Scope, body: TranscriptIn) -> AnalysisOut:
    """The analysis itself, in a worker thread, holding an admission place from its arrival until its work ends."""
    stored = body.model_copy(
        update={
            "transcript_id": scope.inward(body.transcript_id, "transcript_id"),
            "user_id": scope.user(body.user_id),
        }
    )
    with services.admission.admitted():  # past ANALYSIS_QUEUE_LIMIT: 503 BUSY with Retry-After, nothing started
        cancelled = services.metrics.analyses_cancelled.inc
        result = await while_connected(request, lambda: services.analysis.analyze(stored), cancelled)
    services.metrics.observe_analysis(result.stats)
    return AnalysisOut.model_validate(scope.outward_json(result.as_json()))


@router.post("/reliability/analyze/{engine}", responses=errors(409, 410, 413, 415, 503))
async def analyze_engine_json(
    request: Request,
    services: ServicesDep,
    scope: ScopeDep,
    engine: Engine,
    body: Annotated[
        dict[str, Any],
        Body(
            description="what the engine returned (transcript_id, user_id and "
            "canonical_entities may be set beside its keys)"
        ),
    ],
    apply: Annotated[bool, Query(description="answer the engine's JSON with the fixes written in too")] = False,
) -> EngineAnalysisOut:
    """Analyse what an ASR engine returned (Whisper, Deepgram, AssemblyAI, Speechmatics, Gladia) as it is."""
    try:
        _, given = as_namesake(body, engine)
        transcript = TranscriptIn.model_validate(given)
    except ValidationError as exc:
        raise InvalidInputError(field_of(exc), field="body") from exc
    result = await _analyze(request, services, scope, transcript)
    applied = None
    if apply:
        fixes = fixes_of([s.model_dump() for s in result.corrected_segments], result.suggestions)
        applied = write_back(body, engine, fixes)
    return EngineAnalysisOut.model_validate({**result.model_dump(), "applied": applied})


@router.get("/transcripts")
def list_transcripts(
    services: ServicesDep,
    scope: ScopeDep,
    user_id: Identifier | None = None,
    pending: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[TranscriptSummaryOut]:
    """The review queue: this tenant's transcripts, last analysed first, with pending / auto-applied counts."""
    stored_user = None if user_id is None else scope.inward(user_id, "user_id")
    rows = services.queue.list_transcripts(
        tenant=scope.tenant, user_id=stored_user, pending_only=pending, limit=limit, offset=offset
    )
    return [TranscriptSummaryOut.model_validate(r) for r in scope.outward_json(rows)]


@router.get("/transcripts/{transcript_id}", responses=errors(404))
def get_transcript(services: ServicesDep, scope: ScopeDep, transcript_id: Identifier = TranscriptId) -> TranscriptOut:
    """A transcript as the reviewer reads it: its segments as analysed and every suggestion (404 if unknown)."""
    view = services.queue.transcript_view(scope.inward(transcript_id, "transcript_id"))
    whole = {sid: c._asdict() for sid, c in services.queue.completions(view).items()}
    return TranscriptOut.model_validate(scope.outward_json({**view.as_json(), "completions": whole}))


@router.delete("/transcripts/{transcript_id}", responses=errors(404))
def delete_transcript(
    services: ServicesDep, scope: ScopeDep, transcript_id: Identifier = TranscriptId
) -> TranscriptDeletionOut:
    """Delete a transcript, its suggestions and its canonical entities; what its user taught stays."""
    deletion = services.queue.delete(scope.inward(transcript_id, "transcript_id"))
    return TranscriptDeletionOut.model_validate(scope.outward_json(deletion.as_json()))


@router.get("/transcripts/{transcript_id}/suggestions")
def list_suggestions(
    services: ServicesDep, scope: ScopeDep, transcript_id: Identifier = TranscriptId
) -> list[SuggestionOut]:
    """Every suggestion of the transcript, in text order (another tenant's transcript: empty)."""
    rows = services.queue.list_suggestions(scope.inward(transcript_id, "transcript_id"))
    return rows


# The media type each text format is answered with (the JSON one with its schema).
TEXT_MEDIA = {
    TextFormat.TXT: "text/plain; charset=utf-8",
    TextFormat.VTT: "text/vtt; charset=utf-8",
    TextFormat.SRT: "application/x-subrip; charset=utf-8",
}


@router.get(
    "/transcripts/{transcript_id}/text",
    response_model=ReviewedOut,
    responses={
        200: {
            "description": "the reviewed transcript, in the format asked",
            "content": {media.split(";")[0]: {"schema": {"type": "string"}} for media in TEXT_MEDIA.values()},
        },
        **errors(404, 422),
    },
)
def reviewed_text(
    services: ServicesDep,
    scope: ScopeDep,
    transcript_id: Identifier = TranscriptId,
    format: TextFormat = TextFormat.JSON,
) -> ReviewedOut | Response:
    """The transcript as reviewed: applied, accepted, edited and hand-made fixes written in; `state` says whether
    anything is still open. `txt`, `vtt` (WebVTT) and `srt` (SubRip) as files; subtitles need segment times."""
    text = services.queue.reviewed(scope.inward(transcript_id, "transcript_id"))
    if format is TextFormat.JSON:
        return ReviewedOut.model_validate(scope.outward_json(text.as_json()))
    return Response(render(text, format), media_type=TEXT_MEDIA[format])
