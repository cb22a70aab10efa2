"""A user's corrections, learned vocabulary and erasure (the user of the key's tenant)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from namesake.api.deps import ScopeDep, ServicesDep
from namesake.api.schemas import (
    CorrectionOut,
    ErasureOut,
    RefusalOut,
    VocabularyOut,
    errors,
)
from namesake.corrections_memory import ForgetReceipt
from namesake.domain import Identifier
from namesake.users import VocabularyFormat

router = APIRouter(prefix="/v1", tags=["users"])
PageSize = Annotated[int | None, Query(ge=1, le=1000, description="page size (all when absent)")]
# correction ids are PostgreSQL bigints
MAX_ID = 2**63 - 1
Before = Annotated[int | None, Query(ge=1, le=MAX_ID, description="only corrections with a smaller id: the next page")]
CorrectionId = Annotated[int, Path(ge=1, le=MAX_ID)]


@router.get("/users/{user_id}/corrections")
def corrections(
    services: ServicesDep,
    scope: ScopeDep,
    response: Response,
    user_id: Identifier,
    include_superseded: bool = False,
    limit: PageSize = None,
    before: Before = None,
) -> list[CorrectionOut]:
    """The user's corrections memory as mirrored in PostgreSQL, newest first; `X-Next-Before` pages on."""
    stored = scope.inward(user_id, "user_id")
    rows = services.memory.corrections(stored, include_superseded=include_superseded, limit=limit, before=before)
    if limit is not None and len(rows) == limit:
        response.headers["X-Next-Before"] = str(rows[-1]["id"])
    return [CorrectionOut.model_validate(r) for r in scope.outward_json(rows)]


@router.delete("/users/{user_id}/corrections/{correction_id}", responses=errors(404))
def forget(services: ServicesDep, scope: ScopeDep, user_id: Identifier, correction_id: CorrectionId) -> ForgetReceipt:
    """Forget one correction (and the history of that original) in both stores; the receipt says what remains."""
    receipt = services.memory.forget_correction(scope.inward(user_id, "user_id"), correction_id)
    return ForgetReceipt(**scope.outward_json(receipt.as_json()))


@router.get("/users/{user_id}/refusals")
def refusals(services: ServicesDep, scope: ScopeDep, user_id: Identifier) -> list[RefusalOut]:
    """The pairs the user rejected, never proposed to them again: last refused first, with how many decisions."""
    return [RefusalOut.model_validate(r.as_json()) for r in services.memory.refusals(scope.inward(user_id, "user_id"))]


@router.delete("/users/{user_id}/refusals", responses=errors(404))
def forget_refusal(
    services: ServicesDep,
    scope: ScopeDep,
    user_id: Identifier,
    original: Annotated[str, Query(min_length=1, max_length=1000, description="the words heard, as listed")],
    final: Annotated[str, Query(min_length=1, max_length=1000, description="the refused final, as listed")],
) -> RefusalOut:
    """Take a refusal back: the pair may be proposed again, until the user rejects it again."""
    return RefusalOut.model_validate(
        services.memory.forget_refusal(scope.inward(user_id, "user_id"), original, final).as_json()
    )


@router.get("/users/{user_id}/vocabulary")
def vocabulary(
    services: ServicesDep,
    scope: ScopeDep,
    user_id: Identifier,
    format: VocabularyFormat = VocabularyFormat.json,
    transcript_id: Identifier | None = None,
) -> VocabularyOut:
    """The user's learned vocabulary as an ASR engine takes it (keyterm, custom_spelling, additional_vocab…)."""
    transcript = None if transcript_id is None else scope.inward(transcript_id, "transcript_id")
    body = services.memory.vocabulary(scope.inward(user_id, "user_id"), format.value, transcript)
    return VocabularyOut(scope.outward_json(body))


@router.delete("/users/{user_id}")
def erase(services: ServicesDep, scope: ScopeDep, user_id: Identifier) -> ErasureOut:
    """GDPR erasure: everything of the user in both stores; the receipt says what remains (zero)."""
    return ErasureOut.model_validate(
        scope.outward_json(services.jobs.erase_user(scope.inward(user_id, "user_id")).as_json())
    )
