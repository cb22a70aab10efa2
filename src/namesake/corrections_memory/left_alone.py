"""What a reviewer left alone: how often the words of a correction were heard in the call it was taught in and kept.

A reviewer who fixed "line" → Ryan once and left four other "line"s of the same call as they were said, in effect,
that "line" is mostly the word; one who changed every "hands" they met says it is the name here. The memory policy
reads the count (`TaughtMatch.left_alone`) beside how often the pair was taught.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from namesake.adapters import SuggestionRow, Transcript
from namesake.core import normalise
from namesake.domain import RememberedCorrection, SuggestionStatus

# The most recent calls read for it in one analysis (a call's segments are read whole): older lessons go without.
MAX_SOURCE_CALLS = 32


def times_heard(texts: Iterable[str], original: str) -> int:
    """How often the original's words come in the texts, word for word (case, accents and punctuation aside)."""
    words = normalise(original).split()
    if not words:
        return 0
    n = len(words)
    count = 0
    for text in texts:
        said = normalise(text).split()
        count += sum(said[i : i + n] == words for i in range(len(said) - n + 1))
    return count


def times_left_alone(texts: Iterable[str], changed: Counter[str], original: str) -> int:
    """Heard in the call, less the places a fix stands on (accepted, made by hand or applied and kept): at least 0."""
    return max(0, times_heard(texts, original) - changed[normalise(original)])


def with_left_alone(s: Session, remembered: list[RememberedCorrection]) -> list[RememberedCorrection]:
    """The corrections with `left_alone` counted in the call each was last taught in (None where that call is not
    kept, or is older than the MAX_SOURCE_CALLS most recent)."""
    newest: dict[str, float] = {}
    for m in remembered:
        if m.transcript_id is not None:
            newest[m.transcript_id] = min(m.age_days, newest.get(m.transcript_id, m.age_days))
    calls = sorted(newest, key=newest.__getitem__)[:MAX_SOURCE_CALLS]
    if not calls:
        return remembered
    texts = {
        tid: [str(seg.get("text", "")) for seg in segments or []]
        for tid, segments in s.execute(select(Transcript.id, Transcript.segments).where(Transcript.id.in_(calls)))
    }
    changed: dict[str, Counter[str]] = {tid: Counter() for tid in texts}
    kept = (SuggestionStatus.VALIDATED, SuggestionStatus.AUTO_APPLIED)
    for tid, original in s.execute(
        select(SuggestionRow.transcript_id, SuggestionRow.original).where(
            SuggestionRow.transcript_id.in_(list(texts)), SuggestionRow.status.in_(kept)
        )
    ):
        changed[tid][normalise(original)] += 1
    return [
        replace(m, left_alone=times_left_alone(texts[m.transcript_id], changed[m.transcript_id], m.original))
        if m.transcript_id in texts
        else m
        for m in remembered
    ]
