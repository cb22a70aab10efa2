"""The corrected text: a segment with its auto-applied suggestions written in (offsets are the input's)."""

from __future__ import annotations

from collections.abc import Iterable

from namesake.domain import Segment, Suggestion, SuggestionStatus


def corrected_text(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """text with each (start, end, final) replaced; offsets are those of the input text.

    Overlapping edits cannot both apply: the pipeline never returns them, and here the one that starts
    later is skipped (as is one outside the text).
    """
    kept: list[tuple[int, int, str]] = []
    for start, end, final in sorted(edits, key=lambda e: (e[0], e[1])):
        if 0 <= start < end <= len(text) and (not kept or start >= kept[-1][1]):
            kept.append((start, end, final))
    out = text
    for start, end, final in reversed(kept):  # right to left: the offsets to the left stay valid
        out = out[:start] + final + out[end:]
    return out


# What stands written in a transcript: what the pipeline applied, and what a reviewer accepted, edited or fixed.
WRITTEN_IN = (SuggestionStatus.AUTO_APPLIED, SuggestionStatus.VALIDATED)


def corrected_segments(segments: list[Segment], suggestions: list[Suggestion]) -> list[dict[str, str]]:
    """Every segment of the transcript, in input order, with the applied and accepted suggestions written in."""
    by_segment: dict[str, list[tuple[int, int, str]]] = {}
    for s in suggestions:
        if s.status in WRITTEN_IN:
            by_segment.setdefault(s.segment_id, []).append((s.start_char, s.end_char, s.final))
    return [{"id": seg.id, "text": corrected_text(seg.text, by_segment.get(seg.id, ()))} for seg in segments]


def suggestion_counts(suggestions: list[Suggestion]) -> dict[str, int]:
    """How many suggestions an answer lists, by where they stand: the stats of an analysis count these."""
    counts = {status.value: 0 for status in SuggestionStatus}
    for s in suggestions:
        counts[s.status.value] += 1
    return {"suggestions": len(suggestions), **counts}
