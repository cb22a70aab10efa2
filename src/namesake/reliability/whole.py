"""A half fix made whole: "COVERT" → COVID beside "NINETEEN" is "COVERT NINETEEN" → COVID-19.

A suggestion may write part of a list value and leave the rest of the name as heard: its final is the value's first
(or last) words, and the words heard next to it sound like the value's other words ("Acme forward" → "Acme Forward"
in "Acme forward initiative", for the list's "Acmo Forward Initiative"). Accepted as it is, the memory would learn
the half and apply it again everywhere. `completion` finds the whole: the span grown over those neighbouring words
(across a comma or a hyphen, never across the end of a sentence) and the whole value as its final. The review page
offers it beside the suggestion; a reviewer who takes it teaches the whole pair.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import NamedTuple

from namesake.core import compact, sound, sound_similarity, tokenize
from namesake.domain import SAID_NUMBER, Candidate, Disposition, number_said

# What marks a suggestion grown whole among a transcript's suggestions (in its signals).
WHOLE = "whole"
# How alike the neighbouring heard words and the value's missing words must sound ("NINETEEN"/"19").
REST_ALIKE = 0.75
# What may stand between the span and the words that complete it: spaces, a comma, a hyphen.
_BETWEEN = re.compile(r"[\s,\-–]*")
_VALUE_WORDS = re.compile(r"[^\s\-–]+")
_APOSTROPHE = re.compile(r"['’]")
# A possessive ending on the final's last word ("NextEra Energy's"): where the rest of the name is heard after it, the
# name did not end there.
_POSSESSIVE = re.compile(r"['’]s$")
# What `_grown` answers when the words beside the fix already spell the rest of the value.
_WHOLE_ALREADY = (-1, -1)


class Completion(NamedTuple):
    """The whole fix: a wider span of the segment and the list value it becomes."""

    start_char: int
    end_char: int
    original: str
    final: str


def _said(words: list[str]) -> str:
    """The value's words as said: its small numbers in words ("19" → "nineteen")."""
    return " ".join(SAID_NUMBER.sub(lambda m: number_said(m.group()), w) for w in words)


def _sounds_like(heard: str, rest: list[str]) -> bool:
    """The heard words are the value's missing words: the same letters, or near enough in sound, each missing word
    having a sound of its own ("2020" has none: only its letters count)."""
    if compact(heard) == compact(" ".join(rest)):
        return True
    said = _said(rest)
    if not all(sound(w) for w in said.split()):
        return False
    return sound_similarity(heard, said) >= REST_ALIKE


def _unfixed(heard: str, rest: list[str]) -> bool:
    """The rest of the name is heard with other letters, not only in another case: growing over words already
    right would narrow what a reviewer's accept teaches ("Reiner" → Rainer, not "Reiner Blair" → Rainer Blair),
    and a capital the speaker's own words do not have is no fix ("New York city")."""
    return compact(heard) != compact(" ".join(rest))


class Listed(NamedTuple):
    """A list's values by the letters of their first and of their last word, each with its words: what `completion`
    looks a final up in, so that its cost is the few values a final can start or end, not the whole list."""

    by_first: dict[str, list[tuple[str, list[str]]]]
    by_last: dict[str, list[tuple[str, list[str]]]]


def listed(values: Iterable[str]) -> Listed:
    """The index of a list's values (multi-word ones: a one-word value has no rest to complete)."""
    by_first: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    by_last: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for value in dict.fromkeys(values):
        words = _VALUE_WORDS.findall(value)
        if len(words) > 1:
            by_first[compact(words[0])].append((value, words))
            by_last[compact(words[-1])].append((value, words))
    return Listed(by_first, by_last)


def completion(
    text: str, start: int, end: int, final: str, values: Listed, original: str | None = None
) -> Completion | None:
    """The whole list value a half fix of `text[start:end]` → `final` stands for, over the words that complete it
    (None when `original` is given and the text no longer holds it there).

    The final is the value's first (or last) words, letter for letter. Only a fix of the letters grows (a capital
    alone is the list's form of words already heard right), and none where some list value already reads whole with
    the words as heard ("Gulf" before "power", with Gulf Power and Gulf Powers both listed). A possessive the final
    ends with does not stop the rest heard after it ("next energy" → NextEra Energy's before "partners")."""
    fw = _VALUE_WORDS.findall(final)
    heard = text[start:end]
    if not fw or compact(heard) == compact(final) or (original is not None and heard != original):
        return None
    part = [compact(w) for w in fw]
    unpossessed = [*part[:-1], compact(_POSSESSIVE.sub("", fw[-1]))]
    best: Completion | None = None
    ways = [(v, w, True) for v, w in values.by_first.get(part[0], [])]
    ways += [(v, w, False) for v, w in values.by_last.get(part[-1], [])]
    for value, vw, after in ways:
        n = len(fw)
        if len(vw) <= n:
            continue
        head = [compact(w) for w in (vw[:n] if after else vw[len(vw) - n :])]
        past_possessive = head != part  # matched without the final's possessive: the rest grows even if heard right
        if past_possessive and not (after and head == unpossessed):
            continue
        rest = vw[n:] if after else vw[: len(vw) - n]
        found = _grown(text, start, end, rest, after=after, right_grows=past_possessive)
        if found == _WHOLE_ALREADY:
            return None
        if found is not None and (best is None or found[1] - found[0] > best.end_char - best.start_char):
            best = Completion(found[0], found[1], text[found[0] : found[1]], value)
    return best


def _grown(
    text: str, start: int, end: int, rest: list[str], *, after: bool, right_grows: bool = False
) -> tuple[int, int] | None:
    """The span grown over the fewest neighbouring words (one to one more than `rest`) that sound like `rest`, with
    only spaces, a comma or a hyphen between them (over words already right too, with `right_grows`)."""
    if after:
        tail = text[end:]
        words = tokenize(tail)[: len(rest) + 1]
        for k in range(1, len(words) + 1):
            if not _BETWEEN.fullmatch(tail[words[k - 2].end if k > 1 else 0 : words[k - 1].start]):
                return None
            heard = " ".join(t.text for t in words[:k])
            if _APOSTROPHE.search(heard):  # a possessive or an elision is the speaker's form: the name stops there
                return None
            if _sounds_like(heard, rest):
                return (start, end + words[k - 1].end) if right_grows or _unfixed(heard, rest) else _WHOLE_ALREADY
        return None
    head = text[:start]
    words = tokenize(head)[::-1][: len(rest) + 1]
    for k in range(1, len(words) + 1):
        if not _BETWEEN.fullmatch(head[words[k - 1].end : words[k - 2].start if k > 1 else len(head)]):
            return None
        heard = " ".join(t.text for t in reversed(words[:k]))
        if _APOSTROPHE.search(heard):
            return None
        if _sounds_like(heard, rest):
            return (words[k - 1].start, end) if _unfixed(heard, rest) else _WHOLE_ALREADY
    return None


class Span(NamedTuple):
    """What the stage reads of a suggestion (`applied`: it applies by itself)."""

    segment_id: str
    start: int
    end: int
    final: str
    applied: bool = False


def whole_spans(spans: Sequence[Span], texts: dict[str, str], values: Iterable[str]) -> list[Completion | None]:
    """Per suggestion, its completion, where the words it grows over hold no other suggestion but pieces of the same
    value ("wg" → WGN grown over "in america" → America: WGN America), none of them applied by itself unless it is."""
    index = listed(values)
    by_segment: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        by_segment[s.segment_id].append(s)
    out: list[Completion | None] = []
    for s in spans:
        text = texts.get(s.segment_id, "")
        found = completion(text, s.start, s.end, s.final, index) if text else None
        if found is not None and any(
            o.start < found.end_char and o.end > found.start_char and not _piece_of(o, s, found)
            for o in by_segment[s.segment_id]
            if (o.start, o.end) != (s.start, s.end)
        ):
            found = None
        out.append(found)
    return out


def _piece_of(other: Span, grower: Span, whole: Completion) -> bool:
    """Whether `other` lies inside the grown span and writes some of the value's words, and may go with it."""
    inside = whole.start_char <= other.start and other.end <= whole.end_char
    words = [compact(w) for w in _VALUE_WORDS.findall(whole.final)]
    runs = {"".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
    return inside and compact(other.final) in runs and (grower.applied or not other.applied)


def swallowed(spans: Sequence[Span], found: Sequence[Completion | None]) -> set[int]:
    """The suggestions a completion before them grew over (pieces of its value): they go, the whole stays."""
    gone: set[int] = set()
    for i, (s, whole) in enumerate(zip(spans, found, strict=True)):
        if whole is None or i in gone:
            continue
        gone |= {
            j for j, o in enumerate(spans)
            if j != i and o.segment_id == s.segment_id and whole.start_char <= o.start and o.end <= whole.end_char
        }  # fmt: skip
    return gone


def made_whole(kept: list[Candidate], texts: dict[str, str], values: Iterable[str]) -> list[Candidate]:
    """`kept` with each half fix grown over the words that complete its list value, the whole value its final, and
    the pieces of it that it grew over gone."""
    spans = [
        Span(c.segment_id, c.start_char, c.end_char, c.final, c.disposition is Disposition.AUTO_APPLIED) for c in kept
    ]
    found = whole_spans(spans, texts, values)
    gone = swallowed(spans, found)
    out = []
    for i, (c, whole) in enumerate(zip(kept, found, strict=True)):
        if i in gone:
            continue
        if whole is None:
            out.append(c)
            continue
        grown = replace(c, start_char=whole.start_char, end_char=whole.end_char, original=whole.original,
                        final=whole.final)  # fmt: skip
        grown.signals = {**c.signals, WHOLE: 1.0}
        grown.match_original, grown.match_final = whole.original, whole.final
        out.append(grown)
    return out
