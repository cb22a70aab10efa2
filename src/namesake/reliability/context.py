"""Context signals: how plausible the original is where it stands, compared with the final.

Two sources, both inside installed packages or the transcript itself (nothing fetched at run time):
- English word pairs: the unigram and bigram counts of the Google Web Trillion Word corpus that ship in
  the `wordsegment` package (333k words, 258k pairs), read once per process, scored with a stupid-backoff
  bigram model on the words at the edges of the span ("which bodes well" vs "which Biden's well");
- the transcript: how often the final is already written that way elsewhere in it, and how often the
  original is ("the chug cap" once vs "Cup" written right ten times), in any language.
"""

from __future__ import annotations

import logging
import marshal
import math
import os
import sys
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from namesake.core import Token, keep, memoised, tokenize, written_form
from namesake.domain import Candidate, Segment

# The signals fill_context writes: what the other signals cannot know until it has run.
CONTEXT_SIGNALS = frozenset({"final_elsewhere", "original_elsewhere", "left_is_function", "ctx_original", "ctx_gain"})
# Stupid backoff (Brants et al. 2007): an unseen pair scores BACKOFF × the word's unigram probability.
BACKOFF = 0.4
# Probability floor of a word the corpus never saw, per character (longer unknown words are rarer).
UNKNOWN_PER_CHAR = 0.1
# Words after which a proper name is unusual and an everyday noun usual ("the tent", "a cup").
_ARTICLES = frozenset({"the", "a", "an", "this", "that", "these", "those", "le", "la", "les", "un", "une", "des"})
# Where the parsed counts are kept between processes (Settings.namesake_cache_dir, beside the language model's
# weights): read back in ~0.2 s where parsing the package's text takes ~0.45, on the path of every process start
# (the fork server's too). Set by `keep_counts_in` before the counts are first read; unset: parse.
_COUNTS_DIR: dict[str, Path] = {}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WordPairs:
    """Unigram and bigram counts of one language."""

    unigrams: dict[str, float]
    bigrams: dict[str, float]
    total: float


def _read_counts(name: str) -> dict[str, float]:
    text = resources.files("wordsegment").joinpath(name).read_text(encoding="utf-8")
    out: dict[str, float] = {}
    for line in text.splitlines():
        word, _, count = line.partition("\t")
        if count:
            out[word] = float(count)
    return out


def keep_counts_in(folder: Path) -> None:
    """Where `word_pairs` keeps the parsed counts between processes; once per process, before they are first read."""
    _COUNTS_DIR["dir"] = folder


def counts_file(folder: Path) -> Path:
    """The cache file of this wordsegment's counts for this Python's marshal format (another install: another file)."""
    package = resources.files("wordsegment")
    stats = [os.stat(str(package.joinpath(name))) for name in ("unigrams.txt", "bigrams.txt")]
    files = "-".join(f"{st.st_size}-{st.st_mtime_ns}" for st in stats)
    python = f"py{sys.version_info.major}{sys.version_info.minor}-m{marshal.version}"
    return folder / "word-pairs" / f"wordsegment-{files}-{python}.marshal"


def _counts() -> tuple[dict[str, float], dict[str, float]]:
    """Both count tables: from the cache file when there is one, else parsed (and the cache written aside, then
    renamed: a reader never meets half a file; a read-only home only costs the parse)."""
    folder = _COUNTS_DIR.get("dir")
    path = None
    if folder is not None:
        try:
            path = counts_file(folder)
            unigrams, bigrams = marshal.loads(path.read_bytes())
            return unigrams, bigrams
        except (OSError, EOFError, ValueError, TypeError):
            pass
    tables = _read_counts("unigrams.txt"), _read_counts("bigrams.txt")
    if path is not None:
        keep(path, marshal.dumps(tables), "word-pair counts")
    return tables


@lru_cache(maxsize=2)
def word_pairs(language: str) -> WordPairs | None:
    """The language's pair counts, loaded once per process; None where no resource is installed (French)."""
    if not language.startswith("en"):
        return None
    try:
        unigrams, bigrams = _counts()
    except (ModuleNotFoundError, FileNotFoundError):  # pragma: no cover - a declared dependency
        return None
    return WordPairs(unigrams, bigrams, 1024908267229.0)


def _logp(lm: WordPairs, previous: str | None, word: str) -> float:
    """log10 P(word | previous) with stupid backoff to the unigram."""
    count = lm.unigrams.get(word)
    unigram = count / lm.total if count else UNKNOWN_PER_CHAR ** len(word) / lm.total * 10
    if previous is not None:
        pair = lm.bigrams.get(f"{previous} {word}")
        prev_count = lm.unigrams.get(previous)
        if pair and prev_count:
            return math.log10(pair / prev_count)
        return math.log10(BACKOFF * unigram)
    return math.log10(unigram)


def phrase_logp(lm: WordPairs, left: str | None, words: Sequence[str], right: str | None) -> float:
    """log10 P of the words with their neighbours, per word of the phrase (so a split "tall grass" is not penalised)."""
    if not words:
        return 0.0
    total, previous = 0.0, left
    for w in [*words, *([right] if right else [])]:
        total += _logp(lm, previous, w)
        previous = w
    return total / len(words)


@memoised
def _lm_words(text: str) -> tuple[str, ...]:
    return tuple(t.norm for t in tokenize(text))  # "Biden's" is one word, as the pair counts write it: "bidens"


@memoised
def _context_logp(language: str, left: str | None, words: tuple[str, ...], right: str | None) -> float:
    """phrase_logp, once per (neighbours, words): the same change recurs across a transcript."""
    lm = word_pairs(language)
    return 0.0 if lm is None else phrase_logp(lm, left, words, right)


def count_phrases(segments: list[Segment], phrases: set[tuple[str, ...]]) -> Counter[tuple[str, ...]]:
    """How often each phrase (words as written) appears in the transcript; one pass, indexed by first word and
    length (a first word like "the" starts hundreds of phrases: one set lookup per length, not one per phrase)."""
    lengths: dict[str, set[int]] = {}
    for p in phrases:
        if p:
            lengths.setdefault(p[0], set()).add(len(p))
    found: Counter[tuple[str, ...]] = Counter()
    for s in segments:
        words = written_form(s.text)
        for i, w in enumerate(words):
            for n in lengths.get(w, ()):
                # a slice cut short by the segment's end is not a phrase of that length
                if i + n <= len(words) and (p := words[i : i + n]) in phrases:
                    found[p] += 1
    return found


def neighbours(tokens: list[Token], starts: list[int], start: int, end: int) -> tuple[str | None, str | None]:
    """The words just before and just after [start, end) in the segment."""
    i = bisect_left(starts, start)
    j = bisect_right(starts, end - 1)
    left = tokens[i - 1].norm if i > 0 else None
    right = tokens[j].norm if j < len(tokens) else None
    return left, right


def fill_context(
    cands: list[Candidate], segments: list[Segment], tokens: dict[str, list[Token]], language: str
) -> None:
    """Set the context signals of every candidate (pure; the pair counts are read once per process)."""
    lm = word_pairs(language)
    counts = count_phrases(segments, {written_form(t) for c in cands for t in (c.original, c.final)})
    starts = {sid: [t.start for t in toks] for sid, toks in tokens.items()}
    for c in cands:
        toks = tokens[c.segment_id]
        left, right = neighbours(toks, starts[c.segment_id], c.start_char, c.end_char)
        # written right elsewhere in the transcript: minus this span itself when it already reads so
        final_here = 1 if written_form(c.original) == written_form(c.final) else 0
        c.signals["final_elsewhere"] = round(math.log1p(max(0, counts[written_form(c.final)] - final_here)), 4)
        c.signals["original_elsewhere"] = round(math.log1p(max(0, counts[written_form(c.original)] - 1)), 4)
        c.signals["left_is_function"] = 0.0 if left is None else float(left in _ARTICLES)
        if lm is not None:
            lo = _context_logp(language, left, _lm_words(c.original), right)
            lf = _context_logp(language, left, _lm_words(c.final), right)
            c.signals["ctx_original"] = round(lo, 4)
            c.signals["ctx_gain"] = round(lf - lo, 4)
