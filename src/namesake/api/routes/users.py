"""A user's corrections, learned vocabulary and erasure (the user of the key's tenant)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from namesake.api.deps import ScopeDep, ServicesDep
from namesake.corrections_memory.service import list_corrections
from namesake.reliability.inputs import Identifier
from namesake.vocabulary import VocabularyFormat

router = APIRouter(prefix="/v1", tags=["users"])


@router.get("/users/{user_id}/corrections")
def corrections(
    services: ServicesDep, scope: ScopeDep, user_id: Identifier, include_superseded: bool = False
) -> list[dict[str, Any]]:
    """The user's corrections memory as mirrored in PostgreSQL, newest first."""
    rows = list_corrections(
        services.runtime.db, scope.inward(user_id, "user_id"), include_superseded=include_superseded
    )
    return scope.outward_json(rows)  # type: ignore[no-any-return]


@router.get("/users/{user_id}/vocabulary")
def vocabulary(
    services: ServicesDep,
    scope: ScopeDep,
    user_id: Identifier,
    format: VocabularyFormat = VocabularyFormat.json,
    transcript_id: Identifier | None = None,
) -> dict[str, Any]:
    """The user's learned vocabulary as an ASR engine takes it (keyterm, custom_spelling, additional_vocab…)."""
    transcript = None if transcript_id is None else scope.inward(transcript_id, "transcript_id")
    body = services.vocabulary(scope.inward(user_id, "user_id"), format.value, transcript)
    return scope.outward_json(body)  # type: ignore[no-any-return]


@router.delete("/users/{user_id}")
def erase(services: ServicesDep, scope: ScopeDep, user_id: Identifier) -> dict[str, Any]:
    """GDPR erasure: everything of the user in both stores; the receipt says what remains (zero)."""
    return scope.outward_json(services.erase_user(scope.inward(user_id, "user_id")).as_json())  # type: ignore[no-any-return]
