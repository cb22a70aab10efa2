"""The one place a corrections-memory filter is built: every query carries the user it is for."""

from __future__ import annotations

from namesake.adapters.vectors.base import Filter, Match, Range
from namesake.core.errors import InvalidInputError


def memory_filter(
    user_id: str,
    *,
    entity_type: str | None = None,
    embedding_model: str | None = None,
    quarantine_after: int | None = None,
    exclude_promoted: bool = False,
) -> Filter:
    """Filter on one user's corrections; `user_id` is required and never empty."""
    if not isinstance(user_id, str) or not user_id:
        raise InvalidInputError("a corrections-memory query needs a user_id", field="user_id")
    must: list[Match | Range] = [Match("user_id", user_id)]
    if entity_type is not None:
        must.append(Match("entity_type", entity_type))
    if embedding_model is not None:
        must.append(Match("embedding_model", embedding_model))
    if quarantine_after is not None:
        must.append(Range("quarantine_until", gt=quarantine_after))
    must_not = (Match("promoted_to_canonical", True),) if exclude_promoted else ()
    return Filter(must=tuple(must), must_not=must_not)
