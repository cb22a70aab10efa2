"""Spotting for the user's memory: the originals they corrected, spotted as candidates of their own.

Exact originals and near spellings of them (another ASR slip) get the user's final, with what the
memory policy (`memory_policy.py`) needs to decide: how close the window is, how everyday the
original is, and how alike its context is to the one the fix was taught in.
"""

from __future__ import annotations

from collections import defaultdict

from namesake.core import (
    Token,
    compact,
    compact_phonetic_keys,
    memoised,
    normalise,
    phonetic_keys,
    tokenize,
    word_frequency,
)
from namesake.domain import (
    Candidate,
    CandidateSource,
    CanonicalEntry,
    RememberedCorrection,
    Segment,
    TaughtMatch,
)
from namesake.reliability.memory_policy import SAME_CONTEXT, is_one_off
from namesake.reliability.windows import (
    MIN_PHONETIC_KEY_LEN,
    Window,
    WindowIndex,
    function_words,
    fuzzy_pairs,
    window_candidate,
)

# How close a window must be to an original the user corrected to get that user's final proposed.
REMEMBERED_MIN_SIMILARITY = 0.8
# Words either side of a span compared with the context a correction was taught in.
CONTEXT_WORDS = 6
# Content words that must be shared with the taught context before it counts as alike at all.
MIN_SHARED_WORDS = 2
# How everyday a span of numbers only ("90", "2.3") counts: more than any word, a number is never a name.
EVERYDAY_NUMBER = 8.0


def may_inherit(window: str, original: str, function_words: frozenset[str]) -> bool:
    """Whether words of the transcript may take a fix taught on `original`.

    A match by normalised form never crosses a word boundary ("us" is not "u.s") nor turns a function word
    into a name unless that very word was taught; a near spelling never differs in its digits ("kword0417"
    does not inherit the fix of "kword0233").
    """
    if _digits(window) != _digits(original):
        return False
    if compact(window) != compact(original):
        return True
    same_words = normalise(window).split() == normalise(original).split()
    taught_as_is = window.casefold() == original.casefold()
    return same_words and (taught_as_is or compact(window) not in function_words)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def context_share(here: frozenset[str], taught: frozenset[str]) -> float:
    """How alike a span's neighbouring content words are to those the fix was taught among, in [0, 1].

    One shared word is chance ("the two of us"): below MIN_SHARED_WORDS it is 0; the share is of the
    smaller side.
    """
    shared = len(here & taught)
    return shared / max(1, min(len(here), len(taught))) if shared >= MIN_SHARED_WORDS else 0.0


def remembered_candidates(
    segments: list[Segment],
    tokens: list[list[Token]],
    index: WindowIndex,
    keys: list[str],
    remembered: list[RememberedCorrection],
    language: str,
) -> list[Candidate]:
    """The user's learned find-and-replace: exact originals, and near spellings of them (another ASR slip)."""
    if not remembered:
        return []
    as_entries = [CanonicalEntry(m.original, m.entity_type, 0) for m in remembered]
    sims: dict[tuple[int, int], float] = {}
    for wi, mi, sim in fuzzy_pairs(keys, as_entries, REMEMBERED_MIN_SIMILARITY):
        sims[(wi, mi)] = sim
    by_phon: dict[str, list[int]] = defaultdict(list)
    for mi, m in enumerate(remembered):
        for pk in phonetic_keys(m.original, language):
            if len(pk) >= 2 * MIN_PHONETIC_KEY_LEN:  # short keys say too little without a dictionary behind them
                by_phon[pk].append(mi)
    for wi, key in enumerate(keys):
        for pk in compact_phonetic_keys(key, language):
            for mi in by_phon.get(pk, ()):
                sims.setdefault((wi, mi), REMEMBERED_MIN_SIMILARITY)
    out = []
    stop = function_words(language)
    one_off = [is_one_off(m.final, m.original) for m in remembered]
    index.group(keys[wi] for wi, _ in sims)
    # (window, remembered fix, similarity, whether it counts only among the words it was taught among)
    found = [(w, mi, sim, False) for (wi, mi), sim in sims.items() for w in index.windows(keys[wi])]
    found += [(w, mi, 1.0, True) for w, mi in function_word_windows(tokens, remembered, stop)]
    for w, mi, sim, only_in_context in found:
        memo = remembered[mi]
        cand = window_candidate(segments, tokens, w, memo.final, memo.entity_type, CandidateSource.MEMORY)
        if cand is None:
            continue
        window = cand.original if cand.match_original is None else cand.match_original
        if may_inherit(window, memo.original, stop):
            taught = taught_words(memo.context, memo.original, language)
            context = None
            if taught:
                here = neighbour_words(tokens[w.segment], w.first, w.last, language)
                context = round(context_share(here, taught), 4)
            if only_in_context and (context or 0.0) < SAME_CONTEXT:
                continue  # function words are a name only among the words they were taught among
            everyday = everyday_zipf(cand.original, language)
            cand.taught = TaughtMatch(
                round(sim, 4), float(memo.frequency), everyday, context, one_off[mi], memo.action, memo.age_days,
                memo.conflict, memo.left_alone,
            )  # fmt: skip
            out.append(cand)
    return out


def function_word_windows(
    tokens: list[list[Token]], remembered: list[RememberedCorrection], stop: frozenset[str]
) -> list[tuple[Window, int]]:
    """(window, remembered index) where the words of an original made only of function words are heard again.

    The spotter's windows leave such words out ("one", "her": never a name on their own), so a fix the user taught
    on them ("one" → Juan) is found here, word for word; it is kept only where the words around are those it was
    taught among (SAME_CONTEXT), and there the memory's rules apply it.
    """
    taught = [(mi, [t.norm for t in tokenize(m.original)]) for mi, m in enumerate(remembered)]
    taught = [(mi, words) for mi, words in taught if words and all(w in stop for w in words)]
    if not taught:
        return []
    norms = [[t.norm for t in toks] for toks in tokens]
    return [
        (Window(si, i, i + len(words) - 1), mi)
        for mi, words in taught
        for si, seg in enumerate(norms)
        for i in range(len(seg) - len(words) + 1)
        if seg[i : i + len(words)] == words
    ]


def everyday_zipf(text: str, language: str) -> float:
    """Zipf frequency of the span's commonest word, numbers left out ("Kobe 19" is as rare as "Kobe").

    A span of numbers only ("90", "2.3") counts as the most everyday of all: a number is never a name.
    """
    words = [w for w in normalise(text).split() if not w.isdigit()]
    if not words:
        return EVERYDAY_NUMBER
    return max(word_frequency(w, language) for w in words)


def neighbour_words(toks: list[Token], first: int, last: int, language: str) -> frozenset[str]:
    """The content words within CONTEXT_WORDS tokens of the span, the span itself left out."""
    stop = function_words(language)
    near = toks[max(0, first - CONTEXT_WORDS) : first] + toks[last + 1 : last + 1 + CONTEXT_WORDS]
    return frozenset(t.norm for t in near if t.norm not in stop)


def refused_alike(c: Candidate, here: str, refused_around: dict[str, list[str]], language: str) -> bool:
    """Whether the words around the candidate (`here`, as a suggestion keeps them) are much the same as where the
    user refused its final: there the refusal holds whatever the sentence reads (the same sentence in the next call)."""
    words = taught_words(here, c.original, language)
    return any(
        context_share(words, taught_words(context, c.original, language)) >= SAME_CONTEXT
        for context in refused_around.get(compact(c.final), ())
    )


@memoised
def taught_words(context: str, original: str, language: str) -> frozenset[str]:
    """The content words of a correction's taught context, its own original left out."""
    stop = function_words(language) | {t.norm for t in tokenize(original)}
    return frozenset(t.norm for t in tokenize(context) if t.norm not in stop)
