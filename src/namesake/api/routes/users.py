"""A user's corrections."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from namesake.api.deps import ServicesDep
from namesake.corrections_memory.service import list_corrections
from namesake.reliability.inputs import Identifier
from namesake.vocabulary import VocabularyFormat

router = APIRouter(prefix="/v1", tags=["users"])


@router.get("/users/{user_id}/corrections")
def corrections(services: ServicesDep, user_id: Identifier, include_superseded: bool = False) -> list[dict[str, Any]]:
    """The user's corrections memory as mirrored in PostgreSQL, newest first."""
    return list_corrections(services.runtime.db, user_id, include_superseded=include_superseded)


@router.get("/users/{user_id}/vocabulary")
def vocabulary(
    services: ServicesDep,
    user_id: Identifier,
    format: VocabularyFormat = VocabularyFormat.json,
    transcript_id: Identifier | None = None,
) -> dict[str, Any]:
    """The user's learned vocabulary as an ASR engine takes it (keyterm, custom_spelling, additional_vocab…)."""
    return services.vocabulary(user_id, format.value, transcript_id)


@router.delete("/users/{user_id}")
def erase(services: ServicesDep, user_id: Identifier) -> dict[str, Any]:
    """GDPR erasure: everything of the user in both stores; the receipt says what remains (zero)."""
    return services.erase_user(user_id).as_json()
