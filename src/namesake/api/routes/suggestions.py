"""The reviewer's decisions on suggestions, and manual corrections (within the key's tenant)."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter

from namesake.api.deps import ScopeDep, ServicesDep, TranscriptId
from namesake.api.schemas import DecisionIn, EditIn, GroupDecisionIn, GroupOut, ReopenIn, ReopenOut, ReviewOut, errors
from namesake.reliability.inputs import Identifier
from namesake.reliability.types import ReviewAction
from namesake.review.service import ReviewResult
from namesake.transcripts.suggestions import ManualFix

router = APIRouter(prefix="/v1", tags=["review"])


def _out(services: ServicesDep, result: ReviewResult) -> ReviewOut:
    if result.memory is not None:
        services.metrics.memory_writes.labels(result.memory).inc()
    return ReviewOut.model_validate({"suggestion": result.suggestion.as_json(), "memory": result.memory})


def _decide(
    services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn, action: ReviewAction
) -> ReviewOut:
    """Another tenant's suggestion is looked up in this tenant's transcript: a 404 like a missing one."""
    final = body.final if isinstance(body, EditIn) else None
    entity_type = body.entity_type if isinstance(body, EditIn) else None
    transcript_id = scope.inward(body.transcript_id, "transcript_id")
    decided = services.review.decide(suggestion_id=suggestion_id, transcript_id=transcript_id, action=action,
                                     final=final, entity_type=entity_type)  # fmt: skip
    return _out(services, decided)


@router.post("/suggestions/{suggestion_id}/accept", responses=errors(404, 409, 413, 410, 415))
def accept(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Accept: the suggestion is validated and remembered for its user (idempotent)."""
    return _decide(services, scope, suggestion_id, body, ReviewAction.ACCEPT)


@router.post("/suggestions/{suggestion_id}/edit", responses=errors(404, 409, 413, 410, 415))
def edit(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: EditIn) -> ReviewOut:
    """Edit: the reviewer's final is validated and remembered."""
    return _decide(services, scope, suggestion_id, body, ReviewAction.EDIT)


@router.post("/suggestions/{suggestion_id}/reject", responses=errors(404, 409, 413, 410, 415))
def reject(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Reject: never proposed to this user again for the same original and final."""
    return _decide(services, scope, suggestion_id, body, ReviewAction.REJECT)


@router.post("/suggestions/{suggestion_id}/reopen", responses=errors(404, 409, 410, 415))
def reopen(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReopenOut:
    """Undo a decision: the suggestion as the pipeline left it, and what the decision taught taken back."""
    result = services.review.reopen(suggestion_ids=[suggestion_id],
                                    transcript_id=scope.inward(body.transcript_id, "transcript_id"))  # fmt: skip
    return ReopenOut.model_validate(result.as_json())


@router.post("/transcripts/{transcript_id}/decisions", responses=errors(404, 409, 413, 410, 415))
def decide_group(
    services: ServicesDep, scope: ScopeDep, body: GroupDecisionIn, transcript_id: Identifier = TranscriptId
) -> GroupOut:
    """Decide every listed occurrence of one original → final pair at once: remembered once."""
    result = services.review.decide_group(
        suggestion_ids=body.suggestion_ids, transcript_id=scope.inward(transcript_id, "transcript_id"),
        action=body.action, final=body.final, entity_type=body.entity_type,
    )  # fmt: skip
    if result.memory is not None:
        services.metrics.memory_writes.labels(result.memory).inc()
    return GroupOut.model_validate(result.as_json())


@router.post("/transcripts/{transcript_id}/reopen", responses=errors(404, 409, 410, 415))
def reopen_group(
    services: ServicesDep, scope: ScopeDep, body: ReopenIn, transcript_id: Identifier = TranscriptId
) -> ReopenOut:
    """Undo several decisions at once (a group decision, or the last few): all of them or none."""
    result = services.review.reopen(suggestion_ids=body.suggestion_ids,
                                    transcript_id=scope.inward(transcript_id, "transcript_id"))  # fmt: skip
    return ReopenOut.model_validate(result.as_json())


@router.post("/corrections", status_code=201, responses=errors(409, 413, 410, 415))
def manual_correction(services: ServicesDep, scope: ScopeDep, body: ManualFix) -> ReviewOut:
    """A fix of a span nothing suggested: remembered, and suggested to this user from now on."""
    stored = dataclasses.replace(
        body,
        user_id=scope.inward(body.user_id, "user_id"),
        transcript_id=scope.inward(body.transcript_id, "transcript_id"),
    )
    return _out(services, services.review.manual_fix(stored))
