"""A half fix is made whole: the words heard beside it that sound like the rest of its list value join its span."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from namesake.core.settings import Settings
from namesake.domain.types import Candidate, CandidateSource, CanonicalDictionary, Disposition, Segment
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.whole import WHOLE, Span, completion, listed, made_whole, swallowed, whole_spans

DEV_CALL = Path(__file__).resolve().parent.parent / "data" / "dev_call.json.gz"


def _whole(text: str, part: str, final: str, values: list[str]) -> tuple[str, str] | None:
    start = text.index(part)
    found = completion(text, start, start + len(part), final, listed(values))
    return None if found is None else (found.original, found.final)


def test_the_rest_of_the_name_heard_after_or_before_the_fix_joins_it() -> None:
    assert _whole("we saw COVERT NINETEEN cases", "COVERT", "COVID", ["Danaher", "COVID-19"]) == (
        "COVERT NINETEEN",
        "COVID-19",
    )
    assert _whole("thanks Marcus Blanca", "Marcus", "Markus", ["Markus Blanka"]) == ("Marcus Blanca", "Markus Blanka")
    assert _whole("kovid-nineteen cases", "kovid", "COVID", ["COVID-19"]) == ("kovid-nineteen", "COVID-19")
    assert _whole("met Rolf, Rash today", "Rash", "Rasche", ["Ralf Rasche"]) == ("Rolf, Rash", "Ralf Rasche")
    assert _whole("met Ralf Rash today", "Rash", "Rasche", ["Ralf Rasche"]) is None  # "Ralf" is right already
    # a possessive on the half does not end a name whose rest is heard after it
    values = ["NextEra Energy", "NextEra Energy Partners"]
    grown = ("next energy partners", "NextEra Energy Partners")
    assert _whole("through next energy partners today", "next energy", "NextEra Energy's", values) == grown
    assert _whole("through next energy's outlook", "next energy's", "NextEra Energy's", values) is None


def test_nothing_grows_across_a_sentence_over_unlike_words_or_for_a_whole_value() -> None:
    assert _whole("it was COVID. Nineteen people", "COVID", "COVID", ["COVID-19"]) is None
    assert _whole("met Ralf. Rash today", "Rash", "Rasche", ["Ralf Rasche"]) is None
    assert _whole("the Acme forward plan", "Acme forward", "Acme Forward", ["Acmo Forward Initiative"]) is None
    assert _whole("we saw COVERT NINETEEN cases", "COVERT", "COVID-19", ["COVID-19"]) is None  # already whole
    assert _whole("the COVERT strategy", "COVERT", "COVID", ["COVID-19"]) is None
    # a capital alone is the list's form of words heard right: it does not grow ("New York city" stays the speaker's)
    assert _whole("in new york city", "new york", "New York", ["New York City"]) is None
    assert _whole("at gulp power's plant", "gulp", "Gulf", ["Gulf Power"]) is None  # a possessive ends the name
    # some list value already reads whole with the words as heard
    assert _whole("at gulp power today", "gulp", "Gulf", ["Gulf Powers", "Gulf Power"]) is None
    assert _whole("the rav group said", "rav", "REV", ["REV Group 2020"]) is None  # "2020" is not heard


def test_a_fix_grows_over_pieces_of_its_value_only() -> None:
    text = "we saw COVERT NINETEEN cases"
    pieces = [Span("1", 7, 13, "COVID"), Span("1", 14, 22, "19")]  # "NINETEEN" → 19: a piece of COVID-19
    found = whole_spans(pieces, {"1": text}, ["COVID-19"])
    assert found[0] is not None and found[0].original == "COVERT NINETEEN" and swallowed(pieces, found) == {1}
    other = [Span("1", 7, 13, "COVID"), Span("1", 14, 22, "Nineteen Corp")]  # not a piece: nothing grows over it
    assert whole_spans(other, {"1": text}, ["COVID-19"]) == [None, None]
    applied = [Span("1", 7, 13, "COVID"), Span("1", 14, 22, "19", applied=True)]  # a pending fix takes no applied one
    assert whole_spans(applied, {"1": text}, ["COVID-19"])[0] is None


def test_two_fixes_of_one_name_with_a_word_between_become_one() -> None:
    """ "wg" → WGN and "america" → America, taught apart, applied together wrote "WGN in America"."""
    text = "that could add wg in america"
    cands = []
    for part, final in (("wg", "WGN"), ("america", "America")):
        c = Candidate("1", text.index(part), text.index(part) + len(part), part, final, "ORG", CandidateSource.MEMORY)
        c.disposition, c.confidence = Disposition.AUTO_APPLIED, 0.95
        cands.append(c)
    out = made_whole(cands, {"1": text}, ["WGN America", "WGN"])
    assert [(c.original, c.final, c.disposition) for c in out] == [
        ("wg in america", "WGN America", Disposition.AUTO_APPLIED)
    ]


def test_a_grown_candidate_keeps_its_decision_and_says_it_was_made_whole() -> None:
    text = "we saw COVERT NINETEEN cases"
    c = Candidate("1", 7, 13, "COVERT", "COVID", "KEYWORD", CandidateSource.LISTS)
    c.disposition, c.confidence, c.signals = Disposition.AUTO_APPLIED, 0.9, {"edit": 0.5}
    (out,) = made_whole([c], {"1": text}, ["COVID-19"])
    assert (out.original, out.final, out.disposition, out.confidence) == (
        "COVERT NINETEEN",
        "COVID-19",
        Disposition.AUTO_APPLIED,
        0.9,
    )
    assert out.signals[WHOLE] == 1.0 and text[out.start_char : out.end_char] == "COVERT NINETEEN"
    assert c.final == "COVID"  # the stage returns new candidates


def test_on_the_dev_call_a_surname_beside_its_first_name_heard_right_is_fixed_alone() -> None:
    """ "Patrick Connelly" for the analyst Patrick Donnelly: "Patrick" is already right, so the lesson stays
    "Connelly" → Donnelly (grown, it would be taught only beside "Patrick")."""
    with gzip.open(DEV_CALL, "rt") as fh:
        call = json.load(fh)
    segment = next(s for s in call["segments"] if "Patrick Connelly" in s["text"])
    inputs = PipelineInputs([Segment(segment["id"], segment["text"])], CanonicalDictionary(call["canonical_entities"]))
    kept, _ = run_stages(inputs, Settings(reliability_language_model="none"))
    named = [(c.original, c.final, c.signals.get(WHOLE)) for c in kept if "Donnelly" in c.final]
    assert named == [("Connelly", "Donnelly", None)]
