"""What the heard words end with decides the final's ending: an -s form, a hyphened part.

A list value and its -s form read on the same words (Illumina / Illumina's, SME / SMEs): the first trees rate both
readings alike, and the one with more letters often wins where nothing was heard for them ("Illuminate" →
Illumina's, "FPO" → FPL's) or loses where it was ("Illuminists" → Illumina, "SMS" → SME). An ending the words were
heard with is evidence no other signal carries: the reading it contradicts is dropped.

A value heard as one part of a hyphened word ("covid-19" where the list says COVID) keeps the other part: the list
does not name it, and a final without it would delete what was said ("manage covid-19 going" → "manage COVID going").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from namesake.domain import Candidate

# What an -s form adds to its value: a possessive, a plural, both.
S_ENDINGS = ("'s", "’s", "s'", "s’", "s", "es")
# Last heard words that end in an s or z sound ("starts", "accelerx's", "cepheus", "Nagas", "prize", "choice").
_S_SOUND = re.compile(r"(s|z|ce|se|ze|'s|’s|s'|s’)$")
_LAST_WORD = re.compile(r"[\w'’]+")
HYPHENS = "-‐‑–"


class Heard(NamedTuple):
    """One reading of heard words: where (any hashable place), what was heard, what the list writes."""

    place: object
    original: str
    final: str


def s_form(short: str, long: str) -> bool:
    """Whether `long` is `short` with only an -s ending added (a possessive or a plural), whatever the case."""
    return bool(short) and any(long.lower() == short.lower() + e for e in S_ENDINGS)


def heard_with_s(original: str) -> bool:
    """Whether the heard words end in an s or z sound."""
    words = _LAST_WORD.findall(original.lower())
    return bool(words) and _S_SOUND.search(words[-1]) is not None


def with_hyphened_part(heard: str, value: str) -> str:
    """The value with the other part of the one hyphened word it was heard in ("covid-19" → COVID-19, "pre-covid" →
    pre-COVID); the value itself when the heard words are not such a word."""
    if any(c.isspace() for c in heard) or len(heard) <= len(value) + 1:
        return value
    lower, key = heard.lower(), value.lower()
    if len(lower) != len(heard) or not key:  # a letter whose lower case has another length: no safe cut
        return value
    if lower.startswith(key) and heard[len(value)] in HYPHENS:
        return value + heard[len(value) :]
    if lower.endswith(key) and heard[-len(value) - 1] in HYPHENS:
        return heard[: -len(value)] + value
    return value


def contradicted(readings: Sequence[Heard]) -> set[int]:
    """Indices of the readings whose ending the heard words contradict: of a value and its -s form read on the same
    words, the -s form where no s was heard, the bare value where one was."""
    by_place: dict[object, list[int]] = defaultdict(list)
    for i, r in enumerate(readings):
        by_place[r.place].append(i)
    out: set[int] = set()
    for idx in by_place.values():
        if len(idx) < 2:
            continue
        for i in idx:
            r = readings[i]
            longer = [j for j in idx if j != i and s_form(r.final.strip(), readings[j].final.strip())]
            if not longer:
                continue
            heard_s = heard_with_s(r.original)
            out.update(longer if not heard_s else [i])
    return out


def by_heard_ending(cands: list[Candidate]) -> list[Candidate]:
    """The readings whose ending the heard words do not contradict; what the user taught stays whatever its ending."""
    gone = contradicted([Heard((c.segment_id, c.start_char, c.end_char), c.original, c.final) for c in cands])
    return [c for i, c in enumerate(cands) if i not in gone or c.taught is not None]
