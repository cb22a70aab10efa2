"""The identifiers and typed values every room checks alike: ids, entity types, character offsets, times."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, Strict, StringConstraints

from namesake.domain.types import ENTITY_TYPES_SAID, entity_type_of

# PostgreSQL's text and JSONB cannot hold U+0000; an offset beyond this does not fit its integer.
NUL = "\x00"
MAX_OFFSET = 2**31 - 1

# An id as stored: an admin may name a tenant's data as TENANT~id (namesake.core.tenancy); a tenant key may not.
ID_PATTERN = r"^(?:[a-z0-9][a-z0-9-]{0,31}~)?[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$"
# What the schema says of every id: the pattern admits a tenant's prefix, which only an admin key may write.
ID_DESCRIPTION = (
    "An id; `TENANT~id` names a tenant's data with an admin key only (a tenant key's ids have no `~`: 422)."
)
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=233, pattern=ID_PATTERN), Field(description=ID_DESCRIPTION)
]


def _entity_type(value: str) -> str:
    """An entity type in any case, stored upper case; anything else refused, naming the types."""
    stored = entity_type_of(value)
    if stored is None:
        raise ValueError(ENTITY_TYPES_SAID)
    return stored


# An entity type as the spec writes it ("person") or as stored ("PERSON"): stored upper case.
EntityType = Annotated[
    str,
    AfterValidator(_entity_type),
    Field(description="person, org, location, acronym, keyword, date or typo (any case)"),
]
# A character offset: a number, never a boolean ("start_char": false is not 0).
Offset = Annotated[int, Strict(), Field(ge=0, le=MAX_OFFSET)]
# A time in the audio, in seconds: a finite number, never a boolean.
Seconds = Annotated[float, Strict(), Field(ge=0.0, le=10_000_000.0, allow_inf_nan=False)]
