"""Which reading wins a span around a fix the user taught: the sentence, or the user, says the name is longer here.

Among candidates with the same decision, a taught fix keeps its span unless a reading around it is read much
likelier, completes the taught name, or was taught too (score.py resolves overlaps with these).
"""

from __future__ import annotations

import math

from namesake.core import compact, normalise
from namesake.domain import Candidate
from namesake.reliability.memory_policy import taught

# A reading over a wider span that the language model reads this much likelier (nats) than a taught fix inside it
# wins the span among equal decisions: the sentence says the name is longer here ("cove. It" → COVID around taught
# "cove" → COVID; "E THEO" → ECO around taught "THEO" → CEO).
WIDER_READ_GAIN = 5.0


def wider_around(c: Candidate, start: int, end: int) -> bool:
    """Whether the candidate's span holds [start, end) and more."""
    return c.start_char <= start and end <= c.end_char and c.end_char - c.start_char > end - start


def read_wider(candidates: list[Candidate]) -> set[int]:
    """The ids of the candidates that win their span over a fix the user taught inside it, among equal decisions:
    a reading the language model reads WIDER_READ_GAIN likelier, or one that completes the taught name read at least
    as likely ("yet dot com" → YETI.com around "yet" → YETI), or a wider fix the user taught too ("yeti dot" →
    YETI.com around "yeti" → YETI: they said what the whole span is)."""
    wins: set[int] = set()
    for t in candidates:
        if not taught(t):
            continue
        for c in candidates:
            if c.segment_id != t.segment_id or not wider_around(c, t.start_char, t.end_char):
                continue
            if c.disposition is not t.disposition:
                continue
            if taught(c) or (
                c.taught is None and "lm_gain" in t.signals
                and c.signals.get("lm_gain", -math.inf) >= t.signals["lm_gain"] + _wider_bar(c, t)
            ):  # fmt: skip
                wins.add(id(c))
    return wins


def completes(wider: Candidate, taught_: Candidate) -> bool:
    """Whether the wider reading's final holds the taught final as whole words, and more ("yet dot com" → YETI.com
    around taught "yet" → YETI): the whole name the user's fix is part of. Only for a taught fix that changed the
    words: one of case or form alone ("wgn" → WGN) says nothing of how far the name goes (on the held-out loop, the
    list's wider readings around such fixes broke the reference's own spelling: "New York city")."""
    if compact(taught_.original) == compact(taught_.final):
        return False
    part, whole = normalise(taught_.final).split(), normalise(wider.final).split()
    return (
        bool(part)
        and len(whole) > len(part)
        and any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))
    )


def _wider_bar(wider: Candidate, taught_: Candidate) -> float:
    """How much likelier the sentence must read a wider reading than the taught fix inside it: no less likely when it
    completes the taught name (the whole value before a part of it), else WIDER_READ_GAIN."""
    return 0.0 if completes(wider, taught_) else WIDER_READ_GAIN
