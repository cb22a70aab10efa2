"""The transcripts store: transcript and suggestion rows, the canonical-entity collections, and retention.

Every SQL statement on the `transcripts` and `suggestions` tables lives in this package."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.transcripts.canonical_index import (
        CanonicalListReader,
        collection_for,
        drop_transcript_entities,
        index_canonical_entities,
        is_transcript_collection,
    )
    from namesake.transcripts.decisions import DecisionLog, PairReach
    from namesake.transcripts.retention import TranscriptDeletion, delete_transcript, expire_transcripts
    from namesake.transcripts.store import (
        TranscriptStore,
        TranscriptView,
        rejected_pairs_in,
        transcript_ids_in,
        user_row_counts_in,
    )
    from namesake.transcripts.suggestions import (
        MAX_MATCHES,
        ManualFix,
        Span,
        StoredSuggestion,
        SuggestionRows,
        Undone,
    )

__all__ = [
    "MAX_MATCHES",
    "CanonicalListReader",
    "DecisionLog",
    "ManualFix",
    "PairReach",
    "Span",
    "StoredSuggestion",
    "SuggestionRows",
    "TranscriptDeletion",
    "TranscriptStore",
    "TranscriptView",
    "Undone",
    "collection_for",
    "delete_transcript",
    "drop_transcript_entities",
    "expire_transcripts",
    "index_canonical_entities",
    "is_transcript_collection",
    "rejected_pairs_in",
    "transcript_ids_in",
    "user_row_counts_in",
]
__getattr__ = lazy_names(__name__, __file__)
