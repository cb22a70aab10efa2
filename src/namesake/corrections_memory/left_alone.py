"""What a reviewer left alone: how often the words of a correction were heard in the call it was taught in and kept.

A reviewer who fixed "line" → Ryan once and left four other "line"s of the same call as they were said, in effect,
that "line" is mostly the word; one who changed every "hands" they met says it is the name here. The memory policy
reads the count (`TaughtMatch.left_alone`) beside how often the pair was taught.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from namesake.adapters import SuggestionRow, Transcript
from namesake.core import compact, tokenize
from namesake.domain import RememberedCorrection, SuggestionStatus
from namesake.reliability import EVERYDAY, everyday_zipf

# The most recent calls read for it in one analysis (a call's segments are read whole): older lessons go without.
MAX_SOURCE_CALLS = 32


Span = tuple[int, int]


def heard_at(text: str, original: str) -> list[Span]:
    """Where the original's words come in the text, word for word (case, accents and punctuation aside)."""
    words = [t.norm for t in tokenize(original)]
    if not words or not all(w in compact(text) for w in words):  # most segments: no need to split them into words
        return []
    toks, n = tokenize(text), len(words)
    return [
        (toks[i].start, toks[i + n - 1].end)
        for i in range(len(toks) - n + 1)
        if [t.norm for t in toks[i : i + n]] == words
    ]


def times_left_alone(segments: dict[str, str], fixed: dict[str, list[Span]], original: str) -> int:
    """The places the original's words were heard that no kept fix touches (accepted, made by hand, or applied and
    not undone), over a call's segments: a fix of a wider span ("matt gugino" → Matt Gugino) counts as a change."""
    return sum(
        not any(a < f_end and f_start < b for f_start, f_end in fixed.get(sid, ()))
        for sid, text in segments.items()
        for a, b in heard_at(text, original)
    )


def read_by_policy(m: RememberedCorrection, language: str) -> bool:
    """Whether the memory policy reads the count of this correction: an everyday pair, or a change of form alone,
    taught once (`memory_policy.once_taught_bar`); the others go without, and so cost no read."""
    form_only = compact(m.original) == compact(m.final)
    return m.frequency < 2 and (form_only or everyday_zipf(m.original, language) >= EVERYDAY)


def with_left_alone(s: Session, remembered: list[RememberedCorrection]) -> list[RememberedCorrection]:
    """The corrections, those the policy reads the count of with `left_alone` counted in the call each was last taught
    in (None where that call is not kept, or is not among the calls of the MAX_SOURCE_CALLS newest such corrections)."""
    sources = {m.transcript_id for m in remembered if m.transcript_id is not None}
    if not sources:
        return remembered
    language = dict(s.execute(select(Transcript.id, Transcript.language).where(Transcript.id.in_(sources))).all())
    read = [m.transcript_id in language and read_by_policy(m, language[m.transcript_id] or "en") for m in remembered]
    newest: dict[str, float] = {}
    for m, wanted in zip(remembered, read, strict=True):
        if wanted and m.transcript_id is not None:
            newest[m.transcript_id] = min(m.age_days, newest.get(m.transcript_id, m.age_days))
    calls = sorted(newest, key=newest.__getitem__)[:MAX_SOURCE_CALLS]
    if not calls:
        return remembered
    segments = {
        tid: {str(seg.get("id")): str(seg.get("text", "")) for seg in rows or []}
        for tid, rows in s.execute(select(Transcript.id, Transcript.segments).where(Transcript.id.in_(calls)))
    }
    fixed: dict[str, dict[str, list[Span]]] = {tid: {} for tid in segments}
    kept = (SuggestionStatus.VALIDATED, SuggestionStatus.AUTO_APPLIED)
    for tid, sid, start, end in s.execute(
        select(
            SuggestionRow.transcript_id, SuggestionRow.segment_id, SuggestionRow.start_char, SuggestionRow.end_char
        ).where(SuggestionRow.transcript_id.in_(calls), SuggestionRow.status.in_(kept))
    ):
        fixed[tid].setdefault(sid, []).append((start, end))
    return [
        replace(m, left_alone=times_left_alone(segments[m.transcript_id], fixed[m.transcript_id], m.original))
        if wanted and m.transcript_id in segments
        else m
        for m, wanted in zip(remembered, read, strict=True)
    ]
