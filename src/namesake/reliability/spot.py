"""Spot: spans of the transcript that may be mis-recognised canonical entities, with their offsets.

Windows come from `windows.py`; here they are matched against the canonical entries by edit
similarity (the nearest few per window), phonetic key and spelled-letter form, looked up in
dictionaries, and the user's remembered originals are added (`recall.py`).
"""

from __future__ import annotations

from collections import defaultdict

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from namesake.core import compact_phonetic_keys, normalise, phonetic_keys, sound, tokenize, word_frequency
from namesake.domain import (
    DOT_SPOKEN,
    Candidate,
    CandidateSource,
    CanonicalEntry,
    RememberedCorrection,
    Segment,
    web_address_suffix,
)
from namesake.reliability.recall import REMEMBERED_MIN_SIMILARITY, remembered_candidates
from namesake.reliability.windows import (
    MAX_SPELLED_LETTERS,
    MAX_WINDOW_CHARS,
    MIN_PHONETIC_KEY_LEN,
    WindowIndex,
    function_words,
    fuzzy_pairs,
    key_sounds,
    neighbour_is_missing_word,
    similar_pairs,
    spelled_runs,
    window_candidate,
    windows_of,
)

# Fuzzy matches kept per window, nearest first (exact phonetic and spelled-letter matches are always kept).
NEAREST_ENTRIES = 3
# A word at least this frequent (Zipf) is one a speaker says as itself ("comp", "over", "cash").
EVERYDAY_ZIPF = 3.0
VOWELS = frozenset("aeiouy")
# A window that sounds at least this much like an entry is a candidate however it is spelled (phones' edit
# similarity, core/sounds.py).
MIN_SOUND_SIMILARITY = 0.75
# A one-word name this long may be heard as three words, each a syllable ("de Su via" for DSUVIA).
SYLLABLES_AS_WORDS_FROM = 6
# The words a web address's dots are said as ("dot", "point").
SPOKEN_DOTS = frozenset(d.strip() for d in DOT_SPOKEN)


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


def spot_candidates(
    segments: list[Segment],
    entries: list[CanonicalEntry],
    *,
    min_similarity: float,
    max_tokens: int,
    language: str = "en",
    remembered: list[RememberedCorrection] | None = None,
    threads: int = 1,
) -> list[Candidate]:
    """Raw candidates (overlapping, one per window × entry) with their matching signals filled in.

    threads: for the edit-distance matrix (0 = every core), the stage's largest cost; output is the same.
    """
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
    entry_tokens = [len(e.norm.split()) for e in entries]
    widest = longest + 1
    if any(syllables_heard_as_words(3, n, e) for n, e in zip(entry_tokens, entries, strict=True)):
        widest = max(widest, 3)
    index = windows_of(segments, max(1, min(max_tokens, widest)), max_letters, max_chars, function_words(language))
    tokens, keys = index.tokens, index.keys
    hits: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)

    key_index = {k: i for i, k in enumerate(keys)}
    written = [ei for ei, e in enumerate(entries) if not e.spoken]
    # a value with "&" is matched as said ("M and A"), never fuzzily: "Q and" is not Q&A
    fuzzy = [ei for ei in written if "&" not in entries[ei].value]
    for wi, j, sim in nearest_per_window(fuzzy_pairs(keys, [entries[ei] for ei in fuzzy], min_similarity, threads)):
        hits[(wi, fuzzy[j])]["edit"] = sim
    # what sounds like an entry though it is spelled otherwise ("Crystal" for Christelle, "kuna noggle"); a web
    # address is matched by its name alone (misheard_addresses): its "dot com" sounds like every other one
    # (an entry longer than every window can sound like none: its sound is not worked out)
    sounded = [ei for ei in fuzzy if len(entries[ei].key) <= max_chars and not web_address_suffix(entries[ei].value)]
    entry_sounds = [sound(entries[ei].value) for ei in sounded]
    for wi, j, sim in nearest_per_window(similar_pairs(key_sounds(index), entry_sounds, MIN_SOUND_SIMILARITY, threads)):
        hits[(wi, sounded[j])]["sound_match"] = sim
    for wi, ei, sim in misheard_addresses(index, keys, entries, min_similarity, function_words(language)):
        hits[(wi, ei)]["edit"] = sim
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
    # a window's final is the entry, or the words of it left once the shared edge words are trimmed
    letters_only = [not e.spoken and holds_letters(e.value) for e in entries]
    suffixes = [frozenset() if e.spoken else web_address_suffix(e.value) for e in entries]
    index.group(keys[wi] for wi, _ in hits)
    for (wi, ei), signals in hits.items():
        entry, n_entry = entries[ei], entry_tokens[ei]
        spelled = "acronym_spelled" in signals
        for w in index.windows(keys[wi]):
            n_window = w.last - w.first + 1
            if abs(n_window - n_entry) > 1 and not spelled and not syllables_heard_as_words(n_window, n_entry, entry):
                continue
            cand = window_candidate(segments, tokens, w, entry.value, entry.entity_type, CandidateSource.LISTS)
            if cand is None or names_nothing(cand.original, suffixes[ei]):
                continue
            cand.signals.update(signals)
            cand.rank, cand.window_tokens, cand.entry_tokens = entry.rank, n_window, n_entry
            if n_window < n_entry:  # scored like the others (the model learns from it), never proposed
                cand.repeats_neighbour = neighbour_is_missing_word(index.tokens[w.segment], w, entry.norm.split())
            if entry.spoken:  # "M and A" said for M&A: judged against the spoken form, a spelling fix
                cand.match_final = entry.spoken
            elif letters_only[ei]:
                cand.word_for_letters = word_for_letters(cand.original, cand.final, language)
            out.append(cand)

    out.extend(remembered_candidates(segments, tokens, index, keys, remembered or [], language))
    return out


def context_free_spans(segments: list[Segment], language: str = "en") -> list[Candidate]:
    """CONTEXT_FREE material for the LLM: acronym-like tokens and spelled-out letters (no dictionary to match)."""
    stop = function_words(language)
    out: list[Candidate] = []
    for seg in segments:
        toks = tokenize(seg.text)
        for t in toks:
            if t.text.isalpha() and t.text.isupper() and 2 <= len(t.text) <= 6 and t.norm not in stop:
                cand = Candidate(seg.id, t.start, t.end, t.text, t.text, "ACRONYM", CandidateSource.CONTEXT_FREE)
                cand.context_free = True
                out.append(cand)
        for i, j, _key, letters in spelled_runs([t.norm for t in toks], MAX_SPELLED_LETTERS):
            if j - i >= 2:  # three letters at least: "a see" alone is ordinary speech
                start, end = toks[i].start, toks[j].end
                cand = Candidate(
                    seg.id, start, end, seg.text[start:end], letters.upper(), "ACRONYM", CandidateSource.CONTEXT_FREE
                )
                cand.context_free = True
                out.append(cand)
    return out


def syllables_heard_as_words(n_window: int, n_entry: int, entry: CanonicalEntry) -> bool:
    """A one-word name of SYLLABLES_AS_WORDS_FROM letters or more heard as three words ("de Su via" for DSUVIA,
    "d' souza"): one word more than the usual window, or the fix leaves a syllable of the name behind."""
    return n_entry == 1 and n_window == 3 and len(entry.key) >= SYLLABLES_AS_WORDS_FROM


def misheard_addresses(
    index: WindowIndex, keys: list[str], entries: list[CanonicalEntry], min_similarity: float, stop: frozenset[str]
) -> list[tuple[int, int, float]]:
    """(window, entry, similarity) where a web address is said with its name misheard ("yet dot com", "rev grip dot
    com"). The words before its spoken dot and domain are compared with its name alone: on the whole key the shared
    "dot com" lifts every "travelers dot com" over the similarity floor. A window that starts on a function word
    ("the yeti dot com") is not one: the name said right is its own reading, and this one would swallow "the"."""
    tails: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for ei, e in enumerate(entries):
        words = e.norm.split()
        if e.spoken and len(words) > 2 and words[-2] in SPOKEN_DOTS and web_address_suffix(e.value):
            tail = words[-2] + words[-1]
            tails[tail].append((ei, e.key[: -len(tail)]))
    if not tails:
        return []
    out: list[tuple[int, int, float]] = []
    ends = tuple(tails)
    said = [(wi, key) for wi, key in enumerate(keys) if key.endswith(ends)]  # one C call a key: most end otherwise
    index.group(key for _, key in said)
    for wi, key in said:
        first = index.windows(key)[0]
        if index.tokens[first.segment][first.first].norm in stop:
            continue
        for tail, named in tails.items():
            heard = key[: -len(tail)]
            if not key.endswith(tail) or not heard:
                continue
            for ei, name in named:
                if heard != name and Levenshtein.normalized_similarity(heard, name) >= min_similarity:
                    out.append((wi, ei, Levenshtein.normalized_similarity(key, entries[ei].key)))
    return out


def names_nothing(original: str, suffix: frozenset[str]) -> bool:
    """Whether the words say only a web address's dots and domain ("dot com" read as YETI.com): no name in them."""
    return bool(suffix) and set(normalise(original).split()) <= suffix


def word_for_letters(original: str, final: str, language: str = "en") -> bool:
    """Whether an everyday word would become letters nobody says as a word: "workers comp" → CMP, "over" → 3VR.

    Capitals without a vowel are said letter by letter ("C M P"); a recogniser that heard them writes letters,
    not "comp". On the dev files 4,754 such candidates were wrong and 43 right (alignment noise, mostly).
    """
    if not said_as_letters(final):
        return False
    word = original.strip()
    if " " in word or not word.isalpha() or word.isupper() or not VOWELS & set(word.lower()):
        return False
    return word_frequency(word, language) >= EVERYDAY_ZIPF


def said_as_letters(final: str) -> bool:
    """Capitals without a vowel, possessive or not ("CMP", "CVS's"): said letter by letter, never as a word."""
    letters = "".join(ch for ch in final.removesuffix("'s").removesuffix("’s") if ch.isalpha())
    return len(letters) >= 2 and letters.isupper() and not VOWELS & set(letters.lower())


def holds_letters(value: str) -> bool:
    """Whether some run of consecutive words of the value is said letter by letter (`said_as_letters`: "FPL",
    "CVS's", "A B C"), in one pass over its words: the runs are as many as the square of the words."""
    run = 0  # the letters of the run of such words just before this one
    for word in value.split():
        end = word.removesuffix("'s").removesuffix("’s")  # a possessive may end a run, not carry one on
        if _capitals_only(end) and run + sum(ch.isalpha() for ch in end) >= 2:
            return True
        run = run + sum(ch.isalpha() for ch in word) if _capitals_only(word) else 0
    return False


def _capitals_only(word: str) -> bool:
    """Every letter a capital without a vowel (a word without letters too)."""
    return all(ch.isupper() and ch.lower() not in VOWELS for ch in word if ch.isalpha())


def token_set_similarity(original: str, final: str) -> float:
    """token_set_ratio in [0,1], guarded: a subset scores 100, so scale by the length ratio."""
    a, b = normalise(original), normalise(final)
    if not a or not b:
        return 0.0
    guard = min(len(a), len(b)) / max(len(a), len(b))
    return fuzz.token_set_ratio(a, b) / 100.0 * guard
