"""What talks to the outside: PostgreSQL (engine, schema, migrations), the vector stores, the sentence encoder, the
remote LLM, and the `Runtime` that opens them once per process."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.adapters.db import Database, current_revision, json_text, open_database, revisions, upgrade
    from namesake.adapters.embeddings import Embedder
    from namesake.adapters.models import (
        CORRECTION_ACTIONS,
        CanonicalVocabulary,
        CorrectionMirror,
        ErasedTranscript,
        ErasedUser,
        ForgottenRefusal,
        JobRun,
        ReviewDecision,
        SuggestionRow,
        Transcript,
        User,
    )
    from namesake.adapters.runtime import Runtime, open_runtime
    from namesake.adapters.vectors.base import (
        Filter,
        IndexKind,
        Match,
        MatchAny,
        PointId,
        Range,
        VectorPoint,
        VectorStore,
    )

__all__ = [
    "CORRECTION_ACTIONS",
    "CanonicalVocabulary",
    "CorrectionMirror",
    "Database",
    "Embedder",
    "ErasedTranscript",
    "ErasedUser",
    "Filter",
    "ForgottenRefusal",
    "IndexKind",
    "JobRun",
    "Match",
    "MatchAny",
    "PointId",
    "Range",
    "ReviewDecision",
    "Runtime",
    "SuggestionRow",
    "Transcript",
    "User",
    "VectorPoint",
    "VectorStore",
    "current_revision",
    "json_text",
    "open_database",
    "open_runtime",
    "revisions",
    "upgrade",
]
__getattr__ = lazy_names(__name__, __file__)
