"""Text primitives: normalisation, tokens with character offsets, phonetic keys, word frequency."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

import jellyfish

from namesake.core.caches import memoised

# A token is a run of letters/digits, optionally joined by ' & . - (e.g. "AT&T", "Coca-Cola", "U.S").
# French elisions (l', d', qu') are split off: "l'EBITDA" is the article and EBITDA, not one word.
_TOKEN = re.compile(r"(?:(?<![\w'’])(?:[cdjlmnst]|qu)['’](?=\w))|\w+(?:['’&.\-]\w+)*", re.IGNORECASE)
_NON_ALNUM = re.compile(r"[\W_]+")

# Letter names as an ASR writes them when someone spells an acronym ("a see" → ASC).
LETTER_NAMES: dict[str, str] = {
    **{c: c for c in "abcdefghijklmnopqrstuvwxyz"},
    "ay": "a", "eh": "a", "be": "b", "bee": "b", "see": "c", "sea": "c", "cee": "c", "si": "c",
    "dee": "d", "de": "d", "ee": "e", "eff": "f", "ef": "f", "gee": "g", "ge": "g", "aitch": "h",
    "ach": "h", "eye": "i", "ai": "i", "jay": "j", "ji": "j", "kay": "k", "ka": "k", "el": "l",
    "ell": "l", "em": "m", "en": "n", "oh": "o", "owe": "o", "pee": "p", "pe": "p", "queue": "q",
    "cue": "q", "ku": "q", "are": "r", "ar": "r", "ess": "s", "es": "s", "tee": "t", "tea": "t",
    "te": "t", "you": "u", "u": "u", "vee": "v", "ve": "v", "ex": "x", "ix": "x", "why": "y",
    "wai": "y", "zee": "z", "zed": "z", "zi": "z", "zède": "z", "double": "w",
}  # fmt: skip


class Token(NamedTuple):
    """A word of a segment with its [start, end) character offsets and its normalised form."""

    text: str
    start: int
    end: int
    norm: str


def strip_accents(text: str) -> str:
    """Drop combining marks: "Bérangère" → "Berangere"."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


@memoised
def normalise(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form, words kept apart by one space."""
    folded = (text if text.isascii() else strip_accents(text)).casefold()
    return " ".join(_NON_ALNUM.sub(" ", folded).split())


@memoised
def compact(text: str) -> str:
    """Normalised form without spaces: the form the yardstick compares ("I D T" == "IDT")."""
    return normalise(text).replace(" ", "")


_FORM_SPLIT = re.compile(r"[\s\-/]+")


@memoised
def written_form(text: str, cased: bool = True) -> tuple[str, ...]:
    """The words as written: spacing, hyphens, accents and (when cased) case kept, other punctuation dropped."""
    nfc = unicodedata.normalize("NFC", text) if not text.isascii() else text
    words = (_NON_ALNUM.sub("", w) for w in _FORM_SPLIT.split(nfc))
    return tuple(w if cased else w.casefold() for w in words if w)


def form_differs(original: str, final: str) -> bool:
    """Whether writing `final` for `original` changes its form; case counts only where the final has capitals."""
    cased = any(c.isupper() for c in final)
    return written_form(original, cased) != written_form(final, cased)


def changes_text(original: str, final: str) -> bool:
    """A change a reader would see: other letters, or the same letters in another form ("Data Dog" → Datadog)."""
    return compact(original) != compact(final) or form_differs(original, final)


def context_around(text: str, start: int, end: int, radius: int) -> str:
    """The span with up to `radius` characters either side: what a corrections-memory point keeps as context."""
    return text[max(0, start - radius) : end + radius]


def tokenize(text: str) -> list[Token]:
    """Tokens with offsets into `text`; punctuation between tokens and elided articles are skipped."""
    return list(_tokens(text))


@memoised
def _tokens(text: str) -> tuple[Token, ...]:
    """Spotting and the context signals tokenize the same segments: once per text."""
    return tuple(
        Token(m.group(), m.start(), m.end(), compact(m.group()))
        for m in _TOKEN.finditer(text)
        if m.group()[-1] not in "'’"
    )


def phonetic_keys(text: str, language: str = "en") -> tuple[str, ...]:
    """Every sound-alike key for the language: French meetings also get a French key (brands stay English)."""
    joined = compact(text)
    return compact_phonetic_keys(joined, language)


def compact_phonetic_keys(joined: str, language: str = "en") -> tuple[str, ...]:
    """phonetic_keys of an already compact string (the hot path of candidate spotting)."""
    if not joined:
        return ()
    english = str(jellyfish.metaphone(joined))
    if language.startswith("fr"):
        return (english, "fr:" + french_phonetic_key(joined))
    return (english,)


@memoised
def french_phonetic_key(joined: str) -> str:
    """French soundex-like key (phonetic-fr): "Mitnou" / "Mitnoux" → MITNOU."""
    import phonetic_fr

    return str(phonetic_fr.phonetic(joined))


@memoised
def word_frequencies(text: str, language: str = "en") -> tuple[float, ...]:
    """Zipf frequency of each word of the span (0 = unknown, 7 = "the")."""
    from wordfreq import zipf_frequency

    lang = "fr" if language.startswith("fr") else "en"
    return tuple(zipf_frequency(w, lang) for w in normalise(text).split())


def word_frequency(text: str, language: str = "en") -> float:
    """Zipf frequency of the span's rarest word: common words are rarely names."""
    return min(word_frequencies(text, language), default=0.0)


def common_word_frequency(text: str, language: str = "en") -> float:
    """Zipf frequency of the span's most common word: "thanks Reiner" → Rainer would delete "thanks"."""
    return max(word_frequencies(text, language), default=0.0)
