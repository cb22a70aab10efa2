"""The corrected text: a segment with its auto-applied suggestions written in (offsets are the input's)."""

from __future__ import annotations

from collections.abc import Iterable

from namesake.reliability.types import Segment, Suggestion, SuggestionStatus


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


def corrected_segments(segments: list[Segment], suggestions: list[Suggestion]) -> list[dict[str, str]]:
    """Every segment of the transcript, in input order, with the auto-applied suggestions applied."""
    by_segment: dict[str, list[tuple[int, int, str]]] = {}
    for s in suggestions:
        if s.status is SuggestionStatus.AUTO_APPLIED:
            by_segment.setdefault(s.segment_id, []).append((s.start_char, s.end_char, s.final))
    return [{"id": seg.id, "text": corrected_text(seg.text, by_segment.get(seg.id, ()))} for seg in segments]
