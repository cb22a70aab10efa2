"""How a refusal bounds what the memory proposes: exactly as wide as what was refused, held to its sentence.

A rejected pair is refused in its own words and in wider spans that hold them (they would delete words), never in a
narrower one; it stays out unless its sentence reads it and its signals alone would apply it; a pair both made and
refused is contested.
"""

from __future__ import annotations

from collections.abc import Iterable

from namesake.core import compact, normalise
from namesake.domain import Candidate, Disposition, RememberedCorrection
from namesake.reliability.memory_policy import pair

# What one refusal weighs against one fix the user made of the same pair: a contested pair refused at least as
# often as it was made is never applied by itself. Chosen on simulated review sessions (first halves reviewed,
# second halves scored by held-out trees, Earnings-21): such pairs, applied, were right 12 times and harmful 28;
# refused less often than made, right 117 times and harmful 11 (docs/benchmarks/memory.md).
REFUSAL_WEIGHT = 1


def refusal_key(original: str, final: str) -> tuple[str, str]:
    """A refused pair as stored for matching: normalised words of the original, compact final."""
    return (normalise(original), compact(final))


def times_refused(c: Candidate, refused_by_final: dict[str, list[tuple[str, int]]], *, exactly: bool = False) -> int:
    """How often the user refused what the candidate proposes (0: never), in a span holding the refused original
    (`exactly`: in these very words).

    Rejecting "Acne" → Acme refuses "for Acne" → Acme too (wider: it would delete a word). A narrower span is
    not refused: rejecting "covid-19. I'll" → COVID (it ate two words) says nothing against "covid" → COVID,
    a right fix elsewhere that stands on its own.
    """
    words = normalise(c.original)
    times = 0
    for refused_original, n in refused_by_final.get(compact(c.final), ()):
        if refused_original == words or (not exactly and f" {refused_original} " in f" {words} "):
            times = max(times, n)
    return times


def mark_refusals(
    cands: list[Candidate],
    refused: dict[tuple[str, str], int],
    remembered: list[RememberedCorrection],
    read_where_refused: dict[tuple[str, str], float] | None = None,
) -> list[Candidate]:
    """The candidates less what the user refused for good, the rest of what they refused marked.

    A pair they refused and never made is marked `refused` (times): it waits for its sentence (refusal_stands), unless
    they taught the same words another final (they said what the words are: "columbia" → Colombia taught,
    "columbia" → Columbia refused), then it goes. A pair both refused and made in these very words is contested, and
    one refused at least as often as it was made is left to a reviewer (REFUSAL_WEIGHT, docs/benchmarks/memory.md); a
    pair they made whose refusal was of a part of it ("any gas" → Enagas made, "gas" → Enagas refused) stands. A pair
    refused in these very words carries how the language model read it where it was refused (`REFUSED_READ`, from
    `read_where_refused`), for refusal_stands.
    """
    if not refused:
        return cands
    made: dict[tuple[str, str], int] = {}
    for m in remembered:
        made[pair(m)] = made.get(pair(m), 0) + m.frequency
    taught_words = {original for original, _ in made}
    by_final: dict[str, list[tuple[str, int]]] = {}
    for (original, final), n in refused.items():
        by_final.setdefault(final, []).append((original, n))
    kept = []
    for c in cands:
        n = times_refused(c, by_final)
        if n and pair(c) in made:
            exactly = times_refused(c, by_final, exactly=True)
            if not exactly:  # they made these very words and refused only a part of them ("gas" → Enagas)
                kept.append(c)
                continue
            c.contested = True
            c.refused_as_often = exactly * REFUSAL_WEIGHT >= made[pair(c)]
        elif n and compact(c.original) in taught_words:
            continue
        elif n:
            c.refused = n
            where = (read_where_refused or {}).get(refusal_key(c.original, c.final))
            if where is not None:
                c.signals[REFUSED_READ] = where
        kept.append(c)
    return kept


def apply_refusals(
    cands: list[Candidate], refused: dict[tuple[str, str], int], remembered: list[RememberedCorrection]
) -> list[Candidate]:
    """Drop what the user refused (mark_refusals), whatever its sentence: for what no model reads."""
    return [c for c in mark_refusals(cands, refused, remembered) if not c.refused]


# A pair the user refused comes back by itself only where the language model reads its final this much likelier
# (nats) than the heard words in the sentence, and the signals alone would apply it: a reject of "one" → Juan in
# "one of the best" says nothing about "Juan said". Chosen on the held-out loop's review sessions, fold by fold
# (bench/fit/memory_bounds.py).
REFUSED_READ_GAIN = 0.0
# ... or where the model reads its final this much likelier (nats) than in every sentence it was refused in, where
# each of those was read: the reject of "airlock" → AirLOG where the model read AirLOG 17 nats less likely than the
# heard word says little about a sentence where it reads 7 less likely. The signal that carries the best reading
# where it was refused (set by mark_refusals). Chosen on the held-out loop's review sessions, fold by fold
# (docs/benchmarks/2026-12-07-memory-a-refusal-read-against-where-it-was-refused.md).
REFUSED_BETTER_BY = 4.0
REFUSED_READ = "refused_read"


def best_read(gains: Iterable[float | None]) -> float | None:
    """The likeliest the model read a pair where it was refused, over its rejections: only where every one of them was
    read (a rejection nobody read leaves nothing to compare a sentence with)."""
    read = list(gains)
    if not read or any(g is None for g in read):
        return None
    return max(g for g in read if g is not None)


def refusal_stands(c: Candidate) -> bool:
    """Whether a refusal keeps this candidate out: refused, unless it would apply by itself and its sentence reads it
    REFUSED_READ_GAIN likelier than the heard words, or REFUSED_BETTER_BY likelier than every sentence it was refused
    in read it (a refused pair is never queued for the reviewer again)."""
    if not c.refused:
        return False
    gain = c.signals.get("lm_gain")
    if gain is None or c.disposition is not Disposition.AUTO_APPLIED:
        return True
    where = c.signals.get(REFUSED_READ)
    return gain < REFUSED_READ_GAIN and (where is None or gain < where + REFUSED_BETTER_BY)
