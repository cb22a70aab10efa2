"""Golden table for the text primitives."""

from __future__ import annotations

import pytest

from namesake.core.text import compact, normalise, phonetic_keys, tokenize, word_frequency


@pytest.mark.parametrize(
    ("raw", "norm"),
    [("Bérangère", "berangere"), ("  AT&T,  Inc. ", "at t inc"), ("Meetnoo SAS", "meetnoo sas"), ("", "")],
)
def test_normalise(raw: str, norm: str) -> None:
    assert normalise(raw) == norm


def test_tokens_keep_offsets_into_the_text() -> None:
    text = "Hello, AT&T co-op — Zoë's U.S. plan"
    for tok in tokenize(text):
        assert text[tok.start : tok.end] == tok.text
    assert [t.text for t in tokenize(text)] == ["Hello", "AT&T", "co-op", "Zoë's", "U.S", "plan"]
    assert [t.text for t in tokenize("l'EBITDA d'Orange, O'Brien")] == ["EBITDA", "Orange", "O'Brien"]
    assert compact("I D T") == "idt"


@pytest.mark.parametrize(
    ("a", "b", "language"),
    [
        ("Mitnou", "MeetNoo", "en"),
        ("Reiner", "Rainer", "en"),
        ("Bérangère", "Béranger", "en"),
        ("Mitnou", "Mitnoux", "fr"),
    ],
)
def test_sound_alikes_share_a_phonetic_key(a: str, b: str, language: str) -> None:
    assert set(phonetic_keys(a, language)) & set(phonetic_keys(b, language))


def test_common_words_are_frequent_and_names_are_not() -> None:
    assert word_frequency("tree") > 4.0
    assert word_frequency("Cuggino") < 1.0
