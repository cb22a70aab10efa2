"""Where a taught fix meets the list's readings: names the user fixed other words to, confirmed; a wider reading or
a wider taught fix over a narrower one; a refusal of only a part of a made fix."""

from __future__ import annotations

from dataclasses import replace

from namesake.core.settings import Settings
from namesake.domain.types import (
    Candidate,
    CandidateSource,
    CanonicalDictionary,
    Disposition,
    RememberedCorrection,
    Segment,
    TaughtMatch,
)
from namesake.reliability.memory_policy import (
    CONFIRMED_FLOOR,
    confirm_names,
    confirmed_here,
    mark_disputed,
    memory_bounds,
)
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.score import resolve_overlaps
from namesake.reliability.wider import read_wider


def _reading(original: str, final: str, start: int = 0, gain: float | None = None) -> Candidate:
    c = Candidate("1", start, start + len(original), original, final, "ORG", CandidateSource.LISTS)
    if gain is not None:
        c.signals["lm_gain"] = gain
    return c


def test_a_name_the_user_fixed_other_words_to_is_confirmed_for_the_lists_readings_of_it() -> None:
    taught = [RememberedCorrection("covert", "COVID", "ORG"), RememberedCorrection("x", "Pasted " * 20, "ORG"),
              RememberedCorrection("done", "Don", "PERSON", conflict=True)]  # fmt: skip
    kovar, again, don = _reading("Kovar", "COVID"), _reading("covert", "COVID"), _reading("dawn", "Don")
    confirm_names([kovar, again, don], taught)
    assert kovar.name_confirmed and kovar.audit()["name_confirmed"] == 1.0
    assert not again.name_confirmed  # the very words taught: the memory's own rules decide
    assert not don.name_confirmed  # one of two finals taught for the same words: nothing is confirmed
    assert confirmed_here(kovar, CONFIRMED_FLOOR) and not confirmed_here(kovar, CONFIRMED_FLOOR - 0.01)


def test_a_confirmed_name_applies_by_itself_from_the_floor_but_never_where_a_reviewer_decides() -> None:
    c = _reading("Kovar", "COVID")
    c.name_confirmed = True
    assert memory_bounds(c, 0.35, Disposition.PENDING, 0.66) is Disposition.AUTO_APPLIED
    assert memory_bounds(c, 0.2, Disposition.PENDING, 0.66) is Disposition.PENDING
    c.contested = True
    assert memory_bounds(c, 0.35, Disposition.PENDING, 0.66) is Disposition.PENDING
    c.contested, c.extends_right_entity = False, True
    assert c.capped(memory_bounds(c, 0.35, Disposition.PENDING, 0.66)) is Disposition.PENDING


def test_a_reading_the_sentence_says_is_wider_wins_over_a_taught_fix_inside_it() -> None:
    taught = _reading("cove", "COVID", gain=-7.4)
    taught.source, taught.taught = CandidateSource.MEMORY, TaughtMatch(1.0, 1.0, 3.6, 0.0)
    wider, narrow_gain = _reading("cove. It", "COVID", gain=16.1), _reading("cove. It", "COVID", gain=-4.0)
    for c in (taught, wider, narrow_gain):
        c.disposition = Disposition.AUTO_APPLIED
    assert read_wider([taught, wider, narrow_gain]) == {id(wider)}  # 2.4 nats better is not enough
    assert [c.original for c in resolve_overlaps([taught, wider])] == ["cove. It"]
    assert [c.original for c in resolve_overlaps([taught, narrow_gain])] == ["cove"]


def test_a_reading_that_completes_the_taught_name_wins_when_the_sentence_reads_it_no_less_likely() -> None:
    taught = _reading("yet", "YETI", gain=-9.5)
    taught.source, taught.taught = CandidateSource.MEMORY, TaughtMatch(1.0, 4.0, 5.5, 0.0)
    whole, unlikelier = _reading("yet dot com", "YETI.com", gain=-4.8), _reading("yet dot com", "YETI.com", gain=-10.0)
    other = _reading("yet dot com", "DTC", gain=-4.8)  # wider, but not the taught name made whole: 4.7 nats is short
    for c in (taught, whole, unlikelier, other):
        c.disposition = Disposition.AUTO_APPLIED
    assert read_wider([taught, whole, unlikelier, other]) == {id(whole)}
    assert [c.final for c in resolve_overlaps([taught, whole])] == ["YETI.com"]
    assert [c.final for c in resolve_overlaps([taught, unlikelier])] == ["YETI"]
    assert [c.final for c in resolve_overlaps([taught, other])] == ["YETI"]
    cased = _reading("wgn", "WGN", gain=-1.0)  # a fix of case alone says nothing of how far the name goes
    cased.source, cased.taught = CandidateSource.MEMORY, TaughtMatch(1.0, 2.0, 1.0, 0.0)
    star = _reading("star", "Stars", gain=-8.0)  # nor is a final that holds the taught one inside a word its whole
    star.source, star.taught = CandidateSource.MEMORY, TaughtMatch(1.0, 2.0, 4.0, 0.0)
    around = [_reading("wgn america", "WGN America", gain=3.0), _reading("next star nation", "Nexstars", gain=-4.0)]
    for c in (cased, star, *around):
        c.disposition = Disposition.AUTO_APPLIED
    star.segment_id = around[1].segment_id = "2"
    assert read_wider([cased, star, *around]) == set()


def test_a_fix_the_user_made_stands_when_what_they_refused_was_only_a_part_of_it() -> None:
    text = "Connect it on the side of any gas but also on their side. Gas prices rose."
    made = RememberedCorrection("any gas", "Enagas", "ORG", "the results of any gas this year", frequency=2)
    refused = {("gas", "enagas"): 3, ("any gas", "enagas"): 0}
    inputs = PipelineInputs([Segment("1", text)], CanonicalDictionary({"orgs": ["Enagas"]}), user_id="u",
                            remembered=[made], refused={k: v for k, v in refused.items() if v})  # fmt: skip
    kept = {c.original: c for c in run_stages(inputs, Settings())[0]}
    assert not kept["any gas"].contested and kept["any gas"].disposition is Disposition.AUTO_APPLIED
    assert "Gas" not in kept  # the refused part stays refused
    inputs = replace(inputs, refused={("gas", "enagas"): 3, ("any gas", "enagas"): 2})
    again = {c.original: c for c in run_stages(inputs, Settings())[0]}["any gas"]
    assert again.contested and again.refused_as_often  # refused in these very words as often as made


def test_a_wider_fix_the_user_taught_wins_over_a_narrower_one_inside_it() -> None:
    inputs = PipelineInputs(
        [Segment("1", "sales at yeti dot com grew")], CanonicalDictionary(), user_id="u",
        remembered=[RememberedCorrection("yeti", "YETI", "ORG", frequency=16),
                    RememberedCorrection("yeti dot", "YETI.com", "ORG", frequency=2)],
    )  # fmt: skip
    kept, _ = run_stages(inputs, Settings(reliability_language_model="none"))
    assert [(c.original, c.final) for c in kept] == [("yeti dot", "YETI.com")]


def test_the_lists_readings_of_words_taught_two_finals_and_of_their_parts_wait_for_the_reviewer() -> None:
    taught = [RememberedCorrection("next year", "NextEra Energy", "ORG", conflict=True)]
    whole, part, beside = (
        _reading("next year", "NextEra"),
        _reading("year", "NextEra", 5),
        _reading("energy", "Energy", 10),
    )
    wider = _reading("next year energy", "NextEra Energy")  # more than the words taught: the list's rules decide
    theirs = _reading("next", "NextEra")  # a part whose pair the user taught as is
    mark_disputed([whole, part, beside, wider, theirs], [*taught, RememberedCorrection("next", "NextEra", "ORG")])
    assert whole.disputed and part.disputed and not beside.disputed and not wider.disputed and not theirs.disputed
    assert part.capped(Disposition.AUTO_APPLIED) is Disposition.PENDING
