"""The reviewer's decisions on suggestions, and manual corrections (within the key's tenant)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import APIRouter, Query

from namesake.api.deps import ScopeDep, ServicesDep, TranscriptId
from namesake.api.schemas import (
    DecisionIn,
    EditIn,
    GroupDecisionIn,
    GroupOut,
    HistoryOut,
    ProgressOut,
    ReachIn,
    ReachOut,
    ReopenIn,
    ReopenOut,
    ReviewOut,
    ScopeOut,
    errors,
)
from namesake.domain import Identifier, MemoryScope, ReviewAction
from namesake.review import ReviewResult
from namesake.transcripts import ManualFix

router = APIRouter(prefix="/v1", tags=["review"])


def _out(services: ServicesDep, result: ReviewResult) -> ReviewOut:
    if result.memory is not None:
        services.metrics.memory_writes.labels(result.memory).inc()
    return ReviewOut.model_validate({"suggestion": result.suggestion.as_json(), "memory": result.memory,
                                     "scope": result.scope, "also": [s.as_json() for s in result.also]})  # fmt: skip


def _decide(
    services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn, action: ReviewAction
) -> ReviewOut:
    """Another tenant's suggestion is looked up in this tenant's transcript: a 404 like a missing one."""
    final = body.final if isinstance(body, EditIn) else None
    entity_type = body.entity_type if isinstance(body, EditIn) else None
    transcript_id = scope.inward(body.transcript_id, "transcript_id")
    decided = services.review.decide(suggestion_id=suggestion_id, transcript_id=transcript_id, action=action,
                                     final=final, entity_type=entity_type, scope=body.scope)  # fmt: skip
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


@router.post("/suggestions/{suggestion_id}/complete", status_code=201, responses=errors(404, 409, 410, 415))
def complete(services: ServicesDep, scope: ScopeDep, suggestion_id: str, body: DecisionIn) -> ReviewOut:
    """Make a half fix whole: the words beside it that complete its list value fixed with it, by hand, and
    remembered as one pair; an accepted half is taken back (422 when there is nothing to complete)."""
    transcript_id = scope.inward(body.transcript_id, "transcript_id")
    values = services.queue.values(transcript_id)
    return _out(services, services.review.complete(suggestion_id=suggestion_id, transcript_id=transcript_id,
                                                   values=values, scope=body.scope))  # fmt: skip


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
        action=body.action, final=body.final, entity_type=body.entity_type, scope=body.scope,
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


@router.get("/transcripts/{transcript_id}/history", responses=errors(404))
def history(services: ServicesDep, scope: ScopeDep, transcript_id: Identifier = TranscriptId) -> list[HistoryOut]:
    """The decisions taken on the transcript, newest first: what each did, where it teaches, whether it was undone."""
    rows = services.review.history(scope.inward(transcript_id, "transcript_id"))
    return [HistoryOut.model_validate(r) for r in rows]


@router.get("/review/progress")
def progress(services: ServicesDep, scope: ScopeDep, user_id: Identifier | None = None) -> ProgressOut:
    """How far review has gone over the queue (one user's when named): transcripts with nothing left to decide."""
    stored_user = None if user_id is None else scope.inward(user_id, "user_id")
    return ProgressOut.model_validate(services.queue.progress(tenant=scope.tenant, user_id=stored_user))


@router.get("/review/scope", responses=errors(404))
def default_scope(
    services: ServicesDep,
    scope: ScopeDep,
    original: Annotated[str, Query(min_length=1, max_length=1000, description="the words heard")],
    final: Annotated[str, Query(min_length=1, max_length=1000, description="the words written")],
    transcript_id: Identifier = Query(description="the transcript the fix is made in (its language)"),
) -> ScopeOut:
    """Where a fix of these words would apply next by default: narrow (calls whose list holds the final) for
    everyday words, else all of the user's calls."""
    where = services.review.default_scope(original, final, scope.inward(transcript_id, "transcript_id"))
    return ScopeOut(scope=where, everyday=where == MemoryScope.LIST)


@router.post("/review/reach", responses=errors(404, 413, 415))
def reach(services: ServicesDep, scope: ScopeDep, body: ReachIn) -> ReachOut:
    """Read only: where the changes a decision is about to take stand undecided, in this call and in the user's
    other calls, so the page can say how far an accept, a reject or a bulk action reaches before it is taken."""
    pairs = [(p.original, p.final) for p in body.pairs]
    found, other_calls = services.review.reach(scope.inward(body.transcript_id, "transcript_id"), pairs)
    return ReachOut.model_validate({"pairs": [dataclasses.asdict(r) for r in found], "other_calls": other_calls})
