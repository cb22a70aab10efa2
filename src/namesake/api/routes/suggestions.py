"""The reviewer's decisions on suggestions, and manual corrections."""

from __future__ import annotations

from fastapi import APIRouter

from namesake.api.deps import ServicesDep
from namesake.api.schemas import DecisionIn, EditIn, ReviewOut
from namesake.review import ReviewResult
from namesake.transcripts import ManualFix

router = APIRouter(prefix="/v1", tags=["review"])


def _out(services: ServicesDep, result: ReviewResult) -> ReviewOut:
    if result.memory is not None:
        services.metrics.memory_writes.labels(result.memory).inc()
    return ReviewOut.model_validate({"suggestion": result.suggestion, "memory": result.memory})


@router.post("/suggestions/{suggestion_id}/accept")
def accept(services: ServicesDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Accept: the suggestion is validated and remembered for its user (idempotent)."""
    return _out(services, services.review.decide(suggestion_id=suggestion_id, transcript_id=body.transcript_id,
                                                 action="accept"))  # fmt: skip


@router.post("/suggestions/{suggestion_id}/edit")
def edit(services: ServicesDep, suggestion_id: str, body: EditIn) -> ReviewOut:
    """Edit: the reviewer's final is validated and remembered."""
    result = services.review.decide(
        suggestion_id=suggestion_id, transcript_id=body.transcript_id, action="edit", final=body.final
    )
    return _out(services, result)


@router.post("/suggestions/{suggestion_id}/reject")
def reject(services: ServicesDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Reject: never proposed to this user again for the same original and final."""
    return _out(services, services.review.decide(suggestion_id=suggestion_id, transcript_id=body.transcript_id,
                                                 action="reject"))  # fmt: skip


@router.post("/corrections", status_code=201)
def manual_correction(services: ServicesDep, body: ManualFix) -> ReviewOut:
    """A fix of a span nothing suggested: remembered, and suggested to this user from now on."""
    return _out(services, services.review.manual_fix(body))
