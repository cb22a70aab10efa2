"""The corrected text: what a reader gets by applying the auto-applied suggestions by hand."""

from __future__ import annotations

from namesake.domain.types import Segment, Suggestion, SuggestionStatus
from namesake.reliability.apply import corrected_segments, corrected_text


def test_edits_apply_at_the_input_offsets_whatever_their_order_and_lengths() -> None:
    text = "Reiner Blair of Cytova said hi"
    edits = [(16, 22, "Cytiva Ltd"), (0, 6, "Rainer")]  # out of order, one longer than its span
    assert corrected_text(text, edits) == "Rainer Blair of Cytiva Ltd said hi"


def test_an_overlapping_or_out_of_range_edit_is_skipped_not_garbled() -> None:
    assert corrected_text("abcdef", [(0, 3, "X"), (2, 4, "Y"), (5, 9, "Z")]) == "Xdef"


def test_only_auto_applied_suggestions_are_written_in_and_every_segment_comes_back() -> None:
    segs = [Segment("1", "Reiner spoke"), Segment("2", "nothing here")]
    sugg = [
        Suggestion("1", 0, 6, "Reiner", "Rainer", "PERSON", "a", 0.9, SuggestionStatus.AUTO_APPLIED, "rag", {}),
        Suggestion("1", 7, 12, "spoke", "Spoke", "KEYWORD", "b", 0.5, SuggestionStatus.PENDING, "rag", {}),
    ]
    assert corrected_segments(segs, sugg) == [{"id": "1", "text": "Rainer spoke"}, {"id": "2", "text": "nothing here"}]
