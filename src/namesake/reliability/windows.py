"""The spotter's shared ground: a transcript's windows of tokens, matched against entries by edit distance.

Blocking keeps it fast on long transcripts: windows are deduplicated, compared only with
entries of compatible length in one rapidfuzz `cdist` per length — never a Python loop over
windows × entries. Both the canonical spotter (`spot.py`) and the user's remembered
originals (`recall.py`) read them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from namesake.core import LETTER_NAMES, Token, check_cancelled, compact, sound, tokenize
from namesake.domain import Candidate, CandidateSource, CanonicalEntry, Segment
from namesake.reliability.endings import with_hyphened_part

# A window longer than this (compact chars) is never an entity mention worth comparing.
MAX_WINDOW_CHARS = 48
# Below this length a phonetic key says too little ("T", "K") to propose anything on its own.
MIN_PHONETIC_KEY_LEN = 2
# How many of a language's most frequent words count as function words (never a name on their own).
FUNCTION_WORDS = 80
# A change of fewer letters than this is never spotted: a lone letter is not a mis-heard name.
MIN_ORIGINAL_CHARS = 2
# Nobody spells out more letters than this.
MAX_SPELLED_LETTERS = 8
# A neighbouring word this close to an entry's missing word is that word, mis-heard ("Backman" for Beckman).
NEIGHBOUR_SIMILARITY = 0.6


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
    """A transcript's windows: their distinct texts (repeats are compared once), and where each text stands.

    Only the texts that match something are ever looked up, a few in a hundred: their windows are gathered when
    first asked for (`group`), not every window filed by its text up front.
    """

    tokens: list[list[Token]]
    keys: list[str]  # distinct compact texts, first seen first
    spelled: dict[str, str]  # window key → the letters its tokens spell ("a see" → "ac")
    every_key: list[str] = field(repr=False)  # every window's compact text, in text order
    every_packed: list[int] = field(repr=False)  # ... and the window, packed
    _groups: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def group(self, keys: Iterable[str]) -> None:
        """Gather the windows of these texts in one pass over every window (before asking for them one by one)."""
        wanted = set(keys).difference(self._groups)
        if not wanted:
            return
        groups = self._groups
        for k in wanted:
            groups[k] = []
        for k, packed in [(k, p) for k, p in zip(self.every_key, self.every_packed, strict=True) if k in wanted]:
            groups[k].append(packed)

    def windows(self, key: str) -> list[Window]:
        """The windows whose compact text is key, in text order.

        A text not gathered by `group` first gathers every text, once: a caller that skips `group` pays one pass
        over the windows in all, not one per text it asks for."""
        if key not in self._groups:
            self.group(self.keys)
        return [Window.unpack(p) for p in self._groups.get(key, ())]


def windows_of(
    segments: list[Segment],
    max_tokens: int,
    max_letters: int = 0,
    max_chars: int = MAX_WINDOW_CHARS,
    stopwords: frozenset[str] = frozenset(),
) -> WindowIndex:
    """Every window of 1..max_tokens tokens with a content word; the spotter's hot loop: list comprehensions over
    plain ints and strings, level by level (the windows of d + 1 tokens extend those of d by the next token)."""
    max_tokens = min(max_tokens, (1 << _TOK_SHIFT) - 1)
    tokens = [tokenize(s.text) for s in segments]
    every_key: list[str] = []
    every_packed: list[int] = []
    spelled: dict[str, str] = {}
    for si, toks in enumerate(tokens):
        norms = [t.norm for t in toks]
        stop = [n in stopwords for n in norms]
        base = si << _SEG_SHIFT
        keys, content = norms, [not x for x in stop]
        for d in range(min(max_tokens, len(norms))):
            if d:
                keys = [k + t for k, t in zip(keys, norms[d:], strict=False)]
                content = [c or not x for c, x in zip(content, stop[d:], strict=False)]
            # "of the", "and a": function words alone are never a name; keys only grow with d
            kept = [i for i, (c, k) in enumerate(zip(content, keys, strict=True)) if c and len(k) <= max_chars]
            every_key += [keys[i] for i in kept]
            every_packed += [base | (i << _TOK_SHIFT) | d for i in kept]
        if max_letters > 1:
            for i, j, key, letters in spelled_runs(norms, max_letters):
                spelled[key] = letters
                if j - i >= max_tokens or not any(not x for x in stop[i : j + 1]):  # not indexed above
                    every_key.append(key)
                    every_packed.append(base | (i << _TOK_SHIFT) | (j - i))
    distinct = dict.fromkeys(every_key)
    distinct.pop("", None)
    return WindowIndex(tokens, list(distinct), spelled, every_key, every_packed)


def spelled_runs(norms: list[str], max_letters: int) -> Iterator[tuple[int, int, str, str]]:
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


def fuzzy_pairs(
    keys: list[str], entries: list[CanonicalEntry], min_similarity: float, threads: int = 1
) -> list[tuple[int, int, float]]:
    """(window index, entry index, edit similarity) for pairs at or above min_similarity, blocked by length.

    threads: rapidfuzz's workers (0 = every core); the same pairs whatever the count.
    """
    return similar_pairs(keys, [e.key for e in entries], min_similarity, threads)


def key_sounds(index: WindowIndex) -> list[str]:
    """The sound string of each distinct window text (`index.keys`' order), from its first window's words."""
    first: dict[str, int] = {}
    for k, packed in zip(index.every_key, index.every_packed, strict=True):
        first.setdefault(k, packed)
    out = []
    for k in index.keys:
        w = Window.unpack(first[k])
        out.append("".join(sound(t.text) for t in index.tokens[w.segment][w.first : w.last + 1]))
    return out


def similar_pairs(
    keys: list[str], entry_keys: list[str], min_similarity: float, threads: int = 1
) -> list[tuple[int, int, float]]:
    """(key index, entry index, edit similarity) of two lists of strings, at or above min_similarity, blocked by
    length (empty strings match nothing)."""
    if not keys or not entry_keys:
        return []
    entry_len = np.array([len(k) for k in entry_keys])
    by_len: dict[int, list[int]] = defaultdict(list)
    for wi, k in enumerate(keys):
        if k:
            by_len[len(k)].append(wi)
    out: list[tuple[int, int, float]] = []
    for length, wis in by_len.items():
        check_cancelled()  # one cdist per length: the spotter's largest steps
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
            workers=threads or -1,
        )
        rows, cs = np.nonzero(matrix)
        out.extend((wis[r], int(cols[c]), float(matrix[r, c])) for r, c in zip(rows, cs, strict=True))
    return out


def window_candidate(
    segments: list[Segment],
    tokens: list[list[Token]],
    w: Window,
    final: str,
    entity_type: str,
    source: CandidateSource,
) -> Candidate | None:
    """The candidate for window w, trimmed to the words that change; None when nothing changes."""
    seg, toks = segments[w.segment], tokens[w.segment]
    first, last = w.first, w.last
    full_start, full_end = toks[first].start, toks[last].end
    if first == last:
        final = with_hyphened_part(seg.text[full_start:full_end], final)
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
    if source == CandidateSource.LISTS and len(compact(seg.text[start:end])) < MIN_ORIGINAL_CHARS:
        return None  # "Q" → Q&A: one letter says nothing of a name (unless the user taught it: "Q" → Q3)
    new_final = " ".join(words)
    if compact(seg.text[start:end]) == compact(new_final) and (first, last) != (w.first, w.last):
        return None
    cand = Candidate(seg.id, start, end, seg.text[start:end], new_final, entity_type, source)
    cand.match_original, cand.match_final = seg.text[full_start:full_end], final
    return cand


def neighbour_is_missing_word(toks: list[Token], w: Window, entry_words: list[str]) -> bool:
    """Whether a window one word short of its entry has that word beside it, mis-heard.

    "Backman Coulter" for Beckman Coulter: the window "Coulter" would become "Beckman Coulter" and the
    text "Backman Beckman Coulter".
    """
    if w.last - w.first + 1 != len(entry_words) - 1:
        return False
    first, last = compact(entry_words[0]), compact(entry_words[-1])
    close = lambda tok, word: Levenshtein.normalized_similarity(tok.norm, word) >= NEIGHBOUR_SIMILARITY  # noqa: E731
    if w.first > 0 and close(toks[w.first - 1], first) and not close(toks[w.first], first):
        return True
    return w.last + 1 < len(toks) and close(toks[w.last + 1], last) and not close(toks[w.last], last)
