"""The floor every room stands on: the values, enums and identifiers they share (a suggestion, its status, a scope)."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.domain.identifiers import (
        ID_DESCRIPTION,
        ID_PATTERN,
        MAX_OFFSET,
        NUL,
        EntityType,
        Identifier,
        Offset,
        Seconds,
    )
    from namesake.domain.types import (
        DISPOSITION_RANK,
        DOT_SPOKEN,
        ENTITY_TYPES,
        ENTITY_TYPES_SAID,
        LIST_TYPES,
        SAID_NUMBER,
        Candidate,
        CandidateSource,
        CanonicalDictionary,
        CanonicalEntry,
        CorrectionStatus,
        Disposition,
        MemoryScope,
        Mode,
        RememberedCorrection,
        ReviewAction,
        Segment,
        Suggestion,
        SuggestionStatus,
        TaughtMatch,
        Word,
        entity_type_of,
        number_said,
        web_address_suffix,
    )

__all__ = [
    "DISPOSITION_RANK",
    "DOT_SPOKEN",
    "ENTITY_TYPES",
    "ENTITY_TYPES_SAID",
    "ID_DESCRIPTION",
    "ID_PATTERN",
    "LIST_TYPES",
    "MAX_OFFSET",
    "NUL",
    "SAID_NUMBER",
    "Candidate",
    "CandidateSource",
    "CanonicalDictionary",
    "CanonicalEntry",
    "CorrectionStatus",
    "Disposition",
    "EntityType",
    "Identifier",
    "MemoryScope",
    "Mode",
    "Offset",
    "RememberedCorrection",
    "ReviewAction",
    "Seconds",
    "Segment",
    "Suggestion",
    "SuggestionStatus",
    "TaughtMatch",
    "Word",
    "entity_type_of",
    "number_said",
    "web_address_suffix",
]
__getattr__ = lazy_names(__name__, __file__)
