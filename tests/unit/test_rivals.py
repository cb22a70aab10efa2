"""Bigger readings of a name: which readings are held beside the part that took their words, for the language model
to read before one keeps the span."""

from __future__ import annotations

from namesake.domain.types import Candidate, Disposition
from namesake.reliability.rivals import bigger_readings, holds_reading_of, reading
from namesake.reliability.score import resolve_overlaps


def test_a_bigger_reading_holds_the_words_and_begins_or_ends_with_the_parts_final() -> None:
    part = reading("s1", 4, 11, "Michael")
    assert holds_reading_of(reading("s1", 4, 20, "Michael Phillips"), part)
    assert holds_reading_of(reading("s1", 0, 11, "Cytiva"), reading("s1", 6, 11, "Tiva"))  # ends with it
    assert holds_reading_of(reading("s1", 4, 11, "COVID-19"), reading("s1", 4, 11, "COVID"))  # same words, longer
    assert not holds_reading_of(reading("s1", 4, 20, "Phillips Michael Group"), part)  # in the middle: another name
    assert not holds_reading_of(reading("s1", 6, 20, "Michael Phillips"), part)  # crosses it
    assert not holds_reading_of(reading("s2", 4, 20, "Michael Phillips"), part)  # another segment
    assert not holds_reading_of(part, part)  # not itself


def test_every_bigger_reading_of_a_segment_is_paired_with_its_parts() -> None:
    readings = [
        reading("s1", 4, 11, "Michael"),
        reading("s1", 12, 20, "Phillips"),
        reading("s1", 4, 20, "Michael Phillips"),
        reading("s1", 30, 36, "Morgan"),
    ]
    assert sorted(bigger_readings(readings)) == [(2, 0), (2, 1)]


def _reading(start: int, end: int, original: str, final: str, confidence: float, reads: bool) -> Candidate:
    c = Candidate("s1", start, end, original, final, "PERSON", "rag", confidence=confidence)
    c.disposition = Disposition.AUTO_APPLIED if confidence >= 0.5 else Disposition.PENDING
    c.signals["everyday_word"] = 1.0 if reads else 0.0
    return c


def test_a_bigger_reading_the_language_model_will_read_is_held_beside_the_part_that_took_its_words() -> None:
    # "michael" → Michael rates above "michael phillips" → Michael Phillips; both are read, the pass after chooses
    part = _reading(20, 27, "michael", "Michael", 0.9, reads=True)
    whole = _reading(20, 36, "michael phillips", "Michael Phillips", 0.8, reads=True)
    other = _reading(20, 36, "michael phillips", "Michelle Philip", 0.7, reads=True)  # not of the part's name

    def read(c: Candidate) -> bool:
        return bool(c.signals["everyday_word"])

    assert resolve_overlaps([part, whole, other], hold_wider=True, hold_bigger=read) == [part, whole]
    assert resolve_overlaps([part, whole, other], hold_wider=True) == [part]  # no reading: the part alone
    unread = _reading(20, 36, "michael phillips", "Michael Phillips", 0.8, reads=False)
    assert resolve_overlaps([part, unread], hold_wider=True, hold_bigger=read) == [part]  # nothing will read it
    far = _reading(20, 36, "michael phillips", "Michael Phillips", 0.65, reads=True)
    assert resolve_overlaps([part, far], hold_wider=True, hold_bigger=read) == [part]  # rated far below the part
    # after the reading the stronger decision, then the confidence, keeps the span, as for any two readings
    whole.confidence = 0.95
    assert resolve_overlaps([part, whole]) == [whole]


def test_a_part_that_is_the_whole_value_trimmed_and_sounds_nearer_holds_nothing_bigger() -> None:
    # "extra" → NextEra matched "extra energy partners" → NextEra Energy Partners, trimmed to the word that changes;
    # "extra energy partners, liquidity" would delete a word of the sentence (the reading liked it: 0.84 applied)
    part = _reading(11, 16, "extra", "NextEra", 0.93, reads=True)
    part.match_final, part.signals["sound"] = "NextEra Energy Partners", 0.9
    wider = _reading(11, 43, "extra energy partners, liquidity", "NextEra Energy Partners", 0.81, reads=True)
    wider.signals["sound"] = 0.59
    assert resolve_overlaps([part, wider], hold_wider=True, hold_bigger=lambda c: True) == [part]
    part.match_final = None  # a part of its own, not the value trimmed: the bigger reading is read beside it
    assert resolve_overlaps([part, wider], hold_wider=True, hold_bigger=lambda c: True) == [part, wider]
