"""How words sound: the pronouncing dictionary, and the letter-to-sound rules for names it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from namesake.core import sounds


def test_dictionary_words_sound_as_the_dictionary_says() -> None:
    # CMU: COLOMBIA and COLUMBIA are both K AH0 L AH1 M B IY0 AH0
    assert sounds.sound("Colombia") == sounds.sound("Columbia") != ""
    assert sounds.sound_similarity("Colombia", "Columbia") == 1.0


def test_a_name_the_dictionary_lacks_sounds_by_letter_to_sound_rules() -> None:
    assert "christelle" not in sounds._dictionary()
    heard, name = sounds.sound("Crystal"), sounds.sound("Christelle")
    assert name, "eSpeak NG's rules give the name a sound"
    assert heard[:4] == name[:4] == "krXs"  # K R IH S
    assert sounds.sound_similarity("Crystal", "Christelle") >= 0.8
    assert sounds.syllable_similarity("Crystal", "Christelle") == 1.0


def test_capitals_are_said_letter_by_letter() -> None:
    assert sounds.sound("TNT") == sounds.sound("tee en tee")
    assert sounds.spelled_out("KPI") and sounds.spelled_out("CMT")
    assert not sounds.spelled_out("OPEX") and not sounds.spelled_out("Nasa")


@pytest.mark.parametrize(("heard", "name"), [("the", "Cepheid"), ("great", "Tom"), ("and", "Andreas")])
def test_unlike_sounds_are_far(heard: str, name: str) -> None:
    assert sounds.sound_similarity(heard, name) < 0.6


def test_ipa_is_read_into_the_dictionary_alphabet() -> None:
    assert sounds.ipa_sound("kɹˈɪstəl") == sounds.sound("crystal")


def test_the_parsed_dictionary_is_kept_in_the_cache_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sounds, "_DICTIONARY_DIR", {"dir": tmp_path})
    sounds._dictionary.cache_clear()
    try:
        parsed = sounds._dictionary()
        kept = sounds.dictionary_file(tmp_path)
        assert kept.is_file()
        sounds._dictionary.cache_clear()
        monkeypatch.setattr(sounds, "_parse_dictionary", lambda: {})  # a second read must not parse
        assert sounds._dictionary() == parsed
    finally:
        sounds._dictionary.cache_clear()
