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
    from namesake.transcripts.decisions import (
        PairReach,
        history_in,
        language_of_in,
        log_decision_in,
        log_undone_in,
        reach_in,
        segment_texts_in,
    )
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
        decide_in,
        load_suggestions_in,
        save_manual_in,
        settle_in,
        still_standing_in,
        teaching_in,
        undo_in,
    )

__all__ = [
    "MAX_MATCHES",
    "CanonicalListReader",
    "ManualFix",
    "PairReach",
    "Span",
    "StoredSuggestion",
    "TranscriptDeletion",
    "TranscriptStore",
    "TranscriptView",
    "collection_for",
    "decide_in",
    "delete_transcript",
    "drop_transcript_entities",
    "expire_transcripts",
    "history_in",
    "index_canonical_entities",
    "is_transcript_collection",
    "language_of_in",
    "load_suggestions_in",
    "log_decision_in",
    "log_undone_in",
    "reach_in",
    "rejected_pairs_in",
    "save_manual_in",
    "segment_texts_in",
    "settle_in",
    "still_standing_in",
    "teaching_in",
    "transcript_ids_in",
    "undo_in",
    "user_row_counts_in",
]
__getattr__ = lazy_names(__name__, __file__)
