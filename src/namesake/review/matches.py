"""A fix by hand applied to the other places in the transcript where the same words were heard ("replace all")."""

from __future__ import annotations

import dataclasses

from namesake.core import InvalidInputError
from namesake.transcripts import MAX_MATCHES, ManualFix, Span


def same_words(a: str, b: str) -> bool:
    """The same words heard, in any case and spacing: what makes another place a match of the fix."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def whole_words(text: str, start: int, end: int) -> bool:
    """Whether [start, end) begins and ends at word edges: "Data Dog" of "Data Dogmatic" is not a match."""
    return not (start > 0 and text[start - 1].isalnum()) and not (end < len(text) and text[end].isalnum())


def other_matches(fix: ManualFix, spans: list[Span], texts: dict[str, str]) -> list[ManualFix]:
    """The fix at each other span, each checked against the transcript as analysed; InvalidInputError names the one
    that is not the same words (or not in the transcript)."""
    if len(spans) > MAX_MATCHES:  # the body's own limit; checked again for callers inside the process
        raise InvalidInputError(f"also names {len(spans)} places, the limit is {MAX_MATCHES}", field="also")
    out: list[ManualFix] = []
    seen = {(fix.segment_id, fix.start_char, fix.end_char)}
    for i, span in enumerate(spans):
        text = texts.get(span.segment_id)
        if text is None:
            raise InvalidInputError(f"also[{i}]: no segment {span.segment_id!r} in the transcript", field="also")
        if not 0 <= span.start_char < span.end_char <= len(text):
            raise InvalidInputError(f"also[{i}]: offsets outside segment {span.segment_id!r}", field="also")
        heard = text[span.start_char : span.end_char]
        if not whole_words(text, span.start_char, span.end_char):
            raise InvalidInputError(f"also[{i}]: {heard!r} is not whole words of its segment", field="also")
        if not same_words(heard, fix.original):
            raise InvalidInputError(f"also[{i}]: the words there are {heard!r}, not {fix.original!r}", field="also")
        key = (span.segment_id, span.start_char, span.end_char)
        if key in seen:
            continue
        seen.add(key)
        out.append(dataclasses.replace(fix, segment_id=span.segment_id, start_char=span.start_char,
                                       end_char=span.end_char, original=heard, segment_text=text, also=[]))  # fmt: skip
    return out
