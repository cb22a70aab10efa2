"""S1: spans of the transcript that may be mis-recognised canonical entities, with their offsets.

Blocking keeps it fast on long transcripts: windows are deduplicated, compared only with
entries of compatible length in one rapidfuzz `cdist` per length, and looked up by phonetic
key and spelled-letter form in dictionaries — never a Python loop over windows × entries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from namesake.reliability.types import Candidate, CanonicalEntry, RememberedCorrection, Segment
from namesake.text import (
    LETTER_NAMES,
    Token,
    compact,
    compact_phonetic_keys,
    normalise,
    phonetic_keys,
    tokenize,
    word_frequency,
)

# A window longer than this (compact chars) is never an entity mention worth comparing.
MAX_WINDOW_CHARS = 48
# Below this length a phonetic key says too little ("T", "K") to propose anything on its own.
MIN_PHONETIC_KEY_LEN = 2
# How many of a language's most frequent words count as function words (never a name on their own).
FUNCTION_WORDS = 80
# A change of fewer letters than this is never spotted: a lone letter is not a mis-heard name.
MIN_ORIGINAL_CHARS = 2
# Fuzzy matches kept per window, nearest first (exact phonetic and spelled-letter matches are always kept).
NEAREST_ENTRIES = 3
# Nobody spells out more letters than this.
MAX_SPELLED_LETTERS = 8


# A window is packed in one int: segment << 24 | first token << 4 | (last − first); max_tokens < 16.
_SEG_SHIFT, _TOK_SHIFT = 24, 4


class Window(NamedTuple):
    """Tokens first..last of one segment."""

    segment: int
    first: int
    last: int

    @classmethod
    def unpack(cls, packed: int) -> Window:
        """Decode the int form used while indexing."""
        first = (packed >> _TOK_SHIFT) & ((1 << (_SEG_SHIFT - _TOK_SHIFT)) - 1)
        return cls(packed >> _SEG_SHIFT, first, first + (packed & ((1 << _TOK_SHIFT) - 1)))


@dataclass
class WindowIndex:
    """Windows grouped by compact text (repeats are compared once), plus spelled-letter readings."""

    tokens: list[list[Token]]
    by_key: dict[str, list[int]]  # packed windows
    spelled: dict[str, str]  # window key → the letters its tokens spell ("a see" → "ac")

    def windows(self, key: str) -> list[Window]:
        """The windows whose compact text is key."""
        return [Window.unpack(p) for p in self.by_key.get(key, ())]


def windows_of(
    segments: list[Segment],
    max_tokens: int,
    max_letters: int = 0,
    max_chars: int = MAX_WINDOW_CHARS,
    stopwords: frozenset[str] = frozenset(),
) -> WindowIndex:
    """Every window of 1..max_tokens tokens with a content word; the hot loop of S1: plain ints and strings."""
    max_tokens = min(max_tokens, (1 << _TOK_SHIFT) - 1)
    tokens = [tokenize(s.text) for s in segments]
    by_key: dict[str, list[int]] = {}
    spelled: dict[str, str] = {}
    for si, toks in enumerate(tokens):
        norms = [t.norm for t in toks]
        stop = [n in stopwords for n in norms]
        n, base = len(norms), si << _SEG_SHIFT
        # level by level: the windows of d + 1 tokens extend those of d by the next token
        keys, content = norms, [not x for x in stop]
        for d in range(min(max_tokens, n)):
            if d:
                keys = [k + t for k, t in zip(keys, norms[d:], strict=False)]
                content = [c or not x for c, x in zip(content, stop[d:], strict=False)]
            for i, key in enumerate(keys):
                # "of the", "and a": function words alone are never a name; keys only grow with d
                if not content[i] or len(key) > max_chars:
                    continue
                packed = base | (i << _TOK_SHIFT) | d
                bucket = by_key.get(key)
                if bucket is None:
                    by_key[key] = [packed]
                else:
                    bucket.append(packed)
        if max_letters > 1:
            for i, j, key, letters in _spelled_runs(norms, max_letters):
                spelled[key] = letters
                if j - i >= max_tokens or not any(not x for x in stop[i : j + 1]):  # not indexed above
                    by_key.setdefault(key, []).append(base | (i << _TOK_SHIFT) | (j - i))
    by_key.pop("", None)
    return WindowIndex(tokens, by_key, spelled)


def _spelled_runs(norms: list[str], max_letters: int) -> Iterator[tuple[int, int, str, str]]:
    """(first, last, key, letters) of every run of 2+ letter-name tokens ("i", "d", "t" → "idt")."""
    letters = [LETTER_NAMES.get(n) for n in norms]
    for i in range(len(norms)):
        key, spell = norms[i], letters[i]
        if spell is None:
            continue
        for j in range(i + 1, min(i + max_letters, len(norms))):
            letter = letters[j]
            if letter is None:
                break
            key, spell = key + norms[j], spell + letter
            yield i, j, key, spell


@lru_cache(maxsize=8)
def function_words(language: str) -> frozenset[str]:
    """The language's most frequent words (articles, pronouns, prepositions), from wordfreq's bundled lists."""
    from wordfreq import top_n_list

    lang = "fr" if language.startswith("fr") else "en"
    return frozenset(compact(w) for w in top_n_list(lang, FUNCTION_WORDS))


def fuzzy_pairs(keys: list[str], entries: list[CanonicalEntry], min_similarity: float) -> list[tuple[int, int, float]]:
    """(window index, entry index, edit similarity) for pairs at or above min_similarity, blocked by length."""
    if not keys or not entries:
        return []
    entry_keys = [e.key for e in entries]
    entry_len = np.array([len(k) for k in entry_keys])
    by_len: dict[int, list[int]] = defaultdict(list)
    for wi, k in enumerate(keys):
        by_len[len(k)].append(wi)
    out: list[tuple[int, int, float]] = []
    for length, wis in by_len.items():
        # normalized similarity >= s needs |len_a - len_b| <= (1 - s) * max(len_a, len_b)
        lo, hi = length * min_similarity, length / max(min_similarity, 1e-9)
        cols = np.nonzero((entry_len >= lo) & (entry_len <= hi))[0]
        if len(cols) == 0:
            continue
        matrix = process.cdist(
            [keys[w] for w in wis],
            [entry_keys[c] for c in cols],
            scorer=Levenshtein.normalized_similarity,
            score_cutoff=min_similarity,
            dtype=np.float32,
        )
        rows, cs = np.nonzero(matrix)
        out.extend((wis[r], int(cols[c]), float(matrix[r, c])) for r, c in zip(rows, cs, strict=True))
    return out


def nearest_per_window(pairs: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The NEAREST_ENTRIES nearest entries of each window.

    A 3,000-word list offers far more near-misses of any word than a 30-entry one, and only the nearest
    few are ever the right reading: so no similarity knob per list size.
    """
    k = NEAREST_ENTRIES
    by_window: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    for p in pairs:
        by_window[p[0]].append(p)
    out: list[tuple[int, int, float]] = []
    for found in by_window.values():
        out.extend(sorted(found, key=lambda p: -p[2])[:k] if len(found) > k else found)
    return out


def _candidate(
    segments: list[Segment], tokens: list[list[Token]], w: Window, final: str, entity_type: str, source: str
) -> Candidate | None:
    """The candidate for window w, trimmed to the words that change; None when nothing changes."""
    seg, toks = segments[w.segment], tokens[w.segment]
    first, last = w.first, w.last
    full_start, full_end = toks[first].start, toks[last].end
    if compact(seg.text[full_start:full_end]) == compact(final):  # written right: the gate must see it whole
        return Candidate(seg.id, full_start, full_end, seg.text[full_start:full_end], final, entity_type, source)
    words = final.split()
    # Words the window shares with the final at either edge stay as written: the edit is minimal
    # and never spills over a neighbouring right entity ("Reiner Blair" → "Rainer Blair" edits "Reiner").
    while first < last and len(words) > 1 and toks[first].norm == compact(words[0]):
        first, words = first + 1, words[1:]
    while last > first and len(words) > 1 and toks[last].norm == compact(words[-1]):
        last, words = last - 1, words[:-1]
    start, end = toks[first].start, toks[last].end
    if source == "rag" and len(compact(seg.text[start:end])) < MIN_ORIGINAL_CHARS:
        return None  # "Q" → Q&A: one letter says nothing of a name (unless the user taught it: "Q" → Q3)
    new_final = " ".join(words)
    if compact(seg.text[start:end]) == compact(new_final) and (first, last) != (w.first, w.last):
        return None
    cand = Candidate(seg.id, start, end, seg.text[start:end], new_final, entity_type, source)
    cand.meta.update(match_original=seg.text[full_start:full_end], match_final=final)
    return cand


def spot_candidates(
    segments: list[Segment],
    entries: list[CanonicalEntry],
    *,
    min_similarity: float,
    max_tokens: int,
    language: str = "en",
    remembered: list[RememberedCorrection] | None = None,
) -> list[Candidate]:
    """Raw candidates (overlapping, one per window × entry) with their matching signals filled in."""
    memo_entries = [CanonicalEntry(m.original, m.entity_type, 0) for m in remembered or []]
    longest = max((len(e.norm.split()) for e in entries + memo_entries), default=1)
    acronyms = [
        e for e in entries if not e.spoken and (e.entity_type == "ACRONYM" or (e.value.isupper() and len(e.key) <= 6))
    ]
    acronym_set = set(acronyms)
    max_letters = min(MAX_SPELLED_LETTERS, max((len(e.key) for e in acronyms), default=0))
    # a window much longer than every entry cannot reach min_similarity against any of them
    longest_key = max((len(e.key) for e in entries + memo_entries), default=0)
    max_chars = min(MAX_WINDOW_CHARS, int(longest_key / min(min_similarity, REMEMBERED_MIN_SIMILARITY)) + 1)
    index = windows_of(segments, max(1, min(max_tokens, longest + 1)), max_letters, max_chars, function_words(language))
    tokens, by_key = index.tokens, index.by_key
    keys = list(by_key)
    hits: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)

    key_index = {k: i for i, k in enumerate(keys)}
    written = [ei for ei, e in enumerate(entries) if not e.spoken]
    # a value with "&" is matched as said ("M and A"), never fuzzily: "Q and" is not Q&A
    fuzzy = [ei for ei in written if "&" not in entries[ei].value]
    for wi, j, sim in nearest_per_window(fuzzy_pairs(keys, [entries[ei] for ei in fuzzy], min_similarity)):
        hits[(wi, fuzzy[j])]["edit"] = sim
    for ei, e in enumerate(entries):
        # a spoken form is matched only as said: "Q and" or "quite a" are not Q&A
        if e.spoken and e.key in key_index:
            hits[(key_index[e.key], ei)].update(edit=1.0, spoken_form=1.0)

    by_phon: dict[str, list[int]] = defaultdict(list)
    by_letters: dict[str, list[int]] = defaultdict(list)
    for ei in written:
        e = entries[ei]
        for pk in phonetic_keys(e.value, language):
            if len(pk) >= MIN_PHONETIC_KEY_LEN:
                by_phon[pk].append(ei)
        if e in acronym_set:
            by_letters[e.key].append(ei)
    for wi, key in enumerate(keys):
        for pk in compact_phonetic_keys(key, language):
            for ei in by_phon.get(pk, ()):
                hits[(wi, ei)]["phonetic_equal"] = 1.0
    for key, letters in index.spelled.items():
        for ei in by_letters.get(letters, ()):
            hits[(key_index[key], ei)]["acronym_spelled"] = 1.0

    out: list[Candidate] = []
    entry_tokens = [len(e.norm.split()) for e in entries]
    for (wi, ei), signals in hits.items():
        entry, n_entry = entries[ei], entry_tokens[ei]
        spelled = "acronym_spelled" in signals
        for w in index.windows(keys[wi]):
            n_window = w.last - w.first + 1
            if abs(n_window - n_entry) > 1 and not spelled:
                continue
            cand = _candidate(segments, tokens, w, entry.value, entry.entity_type, "rag")
            if cand is None:
                continue
            cand.signals.update(signals)
            cand.meta.update(rank=entry.rank, window_tokens=n_window, entry_tokens=n_entry)
            if entry.spoken:  # "M and A" said for M&A: judged against the spoken form, a spelling fix
                cand.meta["match_final"] = entry.spoken
            out.append(cand)

    out.extend(_remembered_candidates(segments, tokens, index, keys, remembered or [], language))
    return out


# How close a window must be to an original the user corrected to get that user's final proposed.
REMEMBERED_MIN_SIMILARITY = 0.8


def _remembered_candidates(
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
    for (wi, mi), sim in sims.items():
        memo = remembered[mi]
        for w in index.windows(keys[wi]):
            cand = _candidate(segments, tokens, w, memo.final, memo.entity_type, "memory")
            if cand is not None:
                cand.signals["remembered"] = round(sim, 4)
                cand.signals["remembered_frequency"] = float(memo.frequency)
                cand.signals["remembered_everyday"] = everyday_zipf(cand.original, language)
                taught = taught_words(memo.context, memo.original, language)
                if taught:
                    here = neighbour_words(tokens[w.segment], w.first, w.last, language)
                    shared = len(here & taught)
                    # one shared word is chance ("the two of us"); the share is of the smaller side
                    alike = shared / max(1, min(len(here), len(taught))) if shared >= MIN_SHARED_WORDS else 0.0
                    cand.signals["remembered_context"] = round(alike, 4)
                out.append(cand)
    return out


def everyday_zipf(text: str, language: str) -> float:
    """Zipf frequency of the span's commonest word, numbers left out ("Kobe 19" is as rare as "Kobe").

    A span of numbers only ("90", "2.3") counts as the most everyday of all: a number is never a name.
    """
    words = [w for w in normalise(text).split() if not w.isdigit()]
    if not words:
        return EVERYDAY_NUMBER
    return max(word_frequency(w, language) for w in words)


EVERYDAY_NUMBER = 8.0


# Words either side of a span compared with the context a correction was taught in.
CONTEXT_WORDS = 6
# Content words that must be shared with the taught context before it counts as alike at all.
MIN_SHARED_WORDS = 2


def neighbour_words(toks: list[Token], first: int, last: int, language: str) -> frozenset[str]:
    """The content words within CONTEXT_WORDS tokens of the span, the span itself left out."""
    stop = function_words(language)
    near = toks[max(0, first - CONTEXT_WORDS) : first] + toks[last + 1 : last + 1 + CONTEXT_WORDS]
    return frozenset(t.norm for t in near if t.norm not in stop)


@lru_cache(maxsize=50_000)
def taught_words(context: str, original: str, language: str) -> frozenset[str]:
    """The content words of a correction's taught context, its own original left out."""
    stop = function_words(language) | {t.norm for t in tokenize(original)}
    return frozenset(t.norm for t in tokenize(context) if t.norm not in stop)


def context_free_spans(segments: list[Segment], language: str = "en") -> list[Candidate]:
    """CONTEXT_FREE material for the LLM: acronym-like tokens and spelled-out letters (no dictionary to match)."""
    stop = function_words(language)
    out: list[Candidate] = []
    for seg in segments:
        toks = tokenize(seg.text)
        for t in toks:
            if t.text.isalpha() and t.text.isupper() and 2 <= len(t.text) <= 6 and t.norm not in stop:
                cand = Candidate(seg.id, t.start, t.end, t.text, t.text, "ACRONYM", "context_free")
                cand.signals["context_free"] = 1.0
                out.append(cand)
        for i, j, _key, letters in _spelled_runs([t.norm for t in toks], MAX_SPELLED_LETTERS):
            if j - i >= 2:  # three letters at least: "a see" alone is ordinary speech
                start, end = toks[i].start, toks[j].end
                cand = Candidate(seg.id, start, end, seg.text[start:end], letters.upper(), "ACRONYM", "context_free")
                cand.signals["context_free"] = 1.0
                out.append(cand)
    return out


def token_set_similarity(original: str, final: str) -> float:
    """token_set_ratio in [0,1], guarded: a subset scores 100, so scale by the length ratio."""
    a, b = normalise(original), normalise(final)
    if not a or not b:
        return 0.0
    guard = min(len(a), len(b)) / max(len(a), len(b))
    return fuzz.token_set_ratio(a, b) / 100.0 * guard
