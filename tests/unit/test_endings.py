"""The ending the words were heard with: of a value and its -s form, it chooses; a hyphened part heard stays."""

from __future__ import annotations

from namesake.domain.types import Candidate, CandidateSource, TaughtMatch
from namesake.reliability.endings import (
    Heard,
    by_heard_ending,
    contradicted,
    heard_with_s,
    s_form,
    with_hyphened_part,
)


def test_an_s_form_is_the_value_with_a_possessive_or_plural_ending_only() -> None:
    assert s_form("Illumina", "Illumina's")
    assert s_form("SME", "SMEs")
    assert s_form("Kuehne + Nagel", "Kuehne + Nagel's")
    assert not s_form("Illumina", "Illuminati")
    assert not s_form("EBIT", "EBITDA")
    assert not s_form("", "s")


def test_the_heard_words_end_in_an_s_sound_or_not() -> None:
    assert heard_with_s("next starts")
    assert heard_with_s("accelerx's")
    assert heard_with_s("cepheus")
    assert heard_with_s("SMS")
    assert not heard_with_s("Illuminate")
    assert not heard_with_s("FPO")
    assert not heard_with_s("")


def test_the_ending_heard_drops_the_reading_it_contradicts_on_the_same_words_only() -> None:
    readings = [
        Heard(("s1", 0, 10), "Illuminate", "Illumina"),
        Heard(("s1", 0, 10), "Illuminate", "Illumina's"),  # no s heard: not the possessive
        Heard(("s1", 20, 31), "Illuminists", "Illumina"),  # an s heard: not the bare value
        Heard(("s1", 20, 31), "Illuminists", "Illumina's"),
        Heard(("s1", 40, 43), "FPO", "FPL's"),  # alone on its words: nothing to choose between
        Heard(("s1", 50, 53), "SMS", "SME"),
        Heard(("s1", 50, 53), "SMS", "SMS Group"),  # not an -s form of SME
    ]
    assert contradicted(readings) == {1, 2}


def test_a_reading_the_user_taught_stays_whatever_its_ending() -> None:
    def cand(final: str) -> Candidate:
        return Candidate("s1", 0, 3, "FPO", final, "ORG", CandidateSource.LISTS)

    taught = cand("FPL's")
    taught.taught = TaughtMatch(similarity=1.0, frequency=2.0, everyday=0.0)
    assert [c.final for c in by_heard_ending([cand("FPL"), cand("FPL's")])] == ["FPL"]
    assert [c.final for c in by_heard_ending([cand("FPL"), taught])] == ["FPL", "FPL's"]


def test_a_value_heard_as_part_of_a_hyphened_word_keeps_the_other_part() -> None:
    assert with_hyphened_part("covid-19", "COVID") == "COVID-19"
    assert with_hyphened_part("Covid–19", "COVID") == "COVID–19"
    assert with_hyphened_part("pre-covid", "COVID") == "pre-COVID"


def test_other_heard_words_leave_the_value_as_listed() -> None:
    assert with_hyphened_part("covid", "COVID") == "COVID"
    assert with_hyphened_part("covid-19", "COVID-19") == "COVID-19"
    assert with_hyphened_part("covid-19. I'll", "COVID") == "COVID"  # more than the one word
    assert with_hyphened_part("covid19", "COVID") == "COVID"  # no hyphen: a word change, scored as one
    assert with_hyphened_part("x-", "X") == "X"
