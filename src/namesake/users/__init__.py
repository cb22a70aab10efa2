"""Users: the claim every write path takes (and erasure holds alone), and the vocabulary a user taught, exported."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.users.claims import (
        COLLECTIONS_LOCK,
        check_transcript_not_erased,
        claim_user,
        delete_user_in,
        forget_transcript_erasure,
        hold_collections_shared,
        mark_erased,
        mark_transcripts_erased,
        next_correction_number_in,
        user_count_in,
        user_lock_key,
    )
    from namesake.users.vocabulary import VocabularyFormat, build_terms, export

__all__ = [
    "COLLECTIONS_LOCK",
    "VocabularyFormat",
    "build_terms",
    "check_transcript_not_erased",
    "claim_user",
    "delete_user_in",
    "export",
    "forget_transcript_erasure",
    "hold_collections_shared",
    "mark_erased",
    "mark_transcripts_erased",
    "next_correction_number_in",
    "user_count_in",
    "user_lock_key",
]
__getattr__ = lazy_names(__name__, __file__)
