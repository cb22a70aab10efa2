"""The reviewer's decisions on suggestions, and manual corrections (within the key's tenant)."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter

from namesake.api.deps import ScopeDep, ServicesDep
from namesake.api.schemas import DecisionIn, EditIn, ReviewOut, errors
from namesake.review import ReviewResult
from namesake.transcripts import ManualFix

router = APIRouter(prefix="/v1", tags=["review"])


def _out(services: ServicesDep, result: ReviewResult) -> ReviewOut:
    if result.memory is not None:
        services.metrics.memory_writes.labels(result.memory).inc()
    return ReviewOut.model_validate({"suggestion": result.suggestion.as_json(), "memory": result.memory})


def _decide(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn, action: str) -> ReviewOut:
    """Another tenant's suggestion is looked up in this tenant's transcript: a 404 like a missing one."""
    final = body.final if isinstance(body, EditIn) else None
    transcript_id = scope.inward(body.transcript_id, "transcript_id")
    return _out(
        services,
        services.review.decide(suggestion_id=suggestion_id, transcript_id=transcript_id, action=action, final=final),
    )


@router.post("/suggestions/{suggestion_id}/accept", responses=errors(404, 409, 413))
def accept(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Accept: the suggestion is validated and remembered for its user (idempotent)."""
    return _decide(services, scope, suggestion_id, body, "accept")


@router.post("/suggestions/{suggestion_id}/edit", responses=errors(404, 409, 413))
def edit(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: EditIn) -> ReviewOut:
    """Edit: the reviewer's final is validated and remembered."""
    return _decide(services, scope, suggestion_id, body, "edit")


@router.post("/suggestions/{suggestion_id}/reject", responses=errors(404, 409, 413))
def reject(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Reject: never proposed to this user again for the same original and final."""
    return _decide(services, scope, suggestion_id, body, "reject")


@router.post("/corrections", status_code=201, responses=errors(409, 413))
def manual_correction(services: ServicesDep, scope: ScopeDep, body: ManualFix) -> ReviewOut:
    """A fix of a span nothing suggested: remembered, and suggested to this user from now on."""
    stored = dataclasses.replace(
        body,
        user_id=scope.inward(body.user_id, "user_id"),
        transcript_id=scope.inward(body.transcript_id, "transcript_id"),
    )
    return _out(services, services.review.manual_fix(stored))
