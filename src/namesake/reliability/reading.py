"""The language model reads the words around a rewrite: only where a word in use would change.

A rewrite of a word in use ("bodes" → Biden's, "teams" → Teams, "comp" → CMP, "genomics" → Genomics) is
right in one sentence and wrong in the next; what it sounds like and how often the pair repeats cannot
tell which. Such candidates, once the first trees give them RELIABILITY_READ_FROM, get `lm_gain`: how much
likelier the sentence reads with the final than with the original (`ports.LanguageModel`), per occurrence.
Rewrites of unknown forms ("Cytova") and spacing or punctuation forms are not read: the model does not
know the names on the list any better than the spotting does, and those forms are right nearly always
(docs/benchmarks/reliability.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from namesake.domain import Candidate, Disposition, Segment
from namesake.reliability.memory_policy import bonus_of
from namesake.reliability.ports import LanguageModel, Window

# Zipf frequency of the original's most common word from which the model reads it: a word in use, everyday
# ("comp", "teams") or not ("genomics" 2.99, "coolers" 2.92, "newscast" 2.66); not an unknown form ("Cytova" 0).
# Held-out, mean of three seeds: Earnings-21 harm 3.9% → 3.1% against a bar of 3, LibriSpeech 2.2% → 1.3%
# (docs/benchmarks/reliability.md).
READ_ZIPF = 1.5
# The signal the model writes; the second scoring model reads it with the trees' log-odds (STAGE1).
GAIN = "lm_gain"
STAGE1 = "trees_logit"
# How the same change reads across the call: the mean gain of every read occurrence of (heard, final) in the
# transcript, and how many there are. Each occurrence keeps its own gain; the pair's reading is context for it
# (held-out: word-changing auto edits wrong 4.8% → 4.4%, docs/benchmarks/reliability.md).
PAIR_GAIN = "pair_lm_mean"
PAIR_READS = "pair_reads"


@dataclass
class ReadingStats:
    """What the language model read in one run."""

    model: str = ""
    read: int = 0
    windows: int = 0


def needs_reading(c: Candidate, language: str, read_from: float) -> bool:
    """A word in use that could be shown or changed: a word change, or a case change of the same letters.

    Read from `read_from` (RELIABILITY_READ_FROM) whatever the first trees decided (what the model reads may lift a
    dropped one); below it their confidence decides alone, as the second trees were measured (a pending one too: the
    suggest bar is below the reading floor), unless the memory put it in the queue. Never one that is never proposed
    (`score.dispose`): that stays dropped.
    """
    if not language.startswith("en") or c.context_free or c.never_proposed:
        return False
    remembered = c.disposition is not Disposition.DROPPED and (bonus_of(c) > 0 or c.taught is not None)
    if c.confidence < read_from and not remembered:
        return False
    return reads(c.signals)


def reads(signals: dict[str, float]) -> bool:
    """The signals of a rewrite the model should read: an original in use, not a spacing or punctuation form."""
    if signals.get("form_only") and not signals.get("case_only"):
        return False  # "e-commerce" for "e commerce" needs no reader
    return signals.get("everyday_word", 0.0) * 7.0 >= READ_ZIPF


def window_of(text: str, start: int, end: int, final: str, left_words: int, right_words: int) -> Window:
    """The rewrite with up to `left_words` words before it and `right_words` after (plus the rest of the word it
    ends in: "Biden" + "'s"), as written in the segment."""
    left = " ".join(text[:start].split()[-left_words:]) if left_words else ""
    after = text[end:]
    m = re.match(r"\S*(?:\s+\S+){0,%d}" % right_words, after)  # noqa: UP031
    return Window(left, text[start:end], final, after[: m.end()] if m else "")


def read_in_context(
    cands: list[Candidate],
    segments: dict[str, Segment],
    model: LanguageModel,
    language: str,
    *,
    left_words: int,
    right_words: int,
    read_from: float,
) -> ReadingStats:
    """Set `lm_gain` on every candidate that needs reading (one batch for the transcript)."""
    todo = [c for c in cands if needs_reading(c, language, read_from)]
    stats = ReadingStats(model=model.name, read=len(todo))
    if not todo:
        return stats
    windows = [
        window_of(segments[c.segment_id].text, c.start_char, c.end_char, c.final, left_words, right_words) for c in todo
    ]
    stats.windows = len(set(windows))
    gains = [round(g, 4) for g in model.gains(windows)]
    for c, gain in zip(todo, gains, strict=True):
        c.signals[GAIN] = gain
    for c, (mean, n) in zip(todo, pair_means([(c.original, c.final) for c in todo], gains), strict=True):
        c.signals[PAIR_GAIN], c.signals[PAIR_READS] = mean, float(n)
    return stats


def pair_means(pairs: list[tuple[str, str]], gains: list[float]) -> list[tuple[float, int]]:
    """Per occurrence: the mean gain of all occurrences of its (heard in any case, final) pair, and their count."""
    groups: dict[tuple[str, str], list[float]] = {}
    keys = [(heard.lower(), final) for heard, final in pairs]
    for key, gain in zip(keys, gains, strict=True):
        groups.setdefault(key, []).append(gain)
    return [(round(sum(groups[k]) / len(groups[k]), 4), len(groups[k])) for k in keys]
