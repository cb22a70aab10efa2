"""Golden tables for the memory's pure logic: the boost formula and the write decision."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from namesake.adapters.vectors.base import Match, MatchAny
from namesake.core.errors import InvalidInputError
from namesake.core.settings import Settings
from namesake.corrections_memory.consolidation import Existing, SemanticHit, WriteOutcome, consolidate
from namesake.corrections_memory.heard import heard_entry, heard_forms, with_heard, without_taught_by
from namesake.corrections_memory.scope import default_scope, in_scope, listed_values, memory_filter, split_by_scope
from namesake.domain.types import (
    Candidate,
    CanonicalDictionary,
    Disposition,
    MemoryScope,
    RememberedCorrection,
    ReviewAction,
    Segment,
    TaughtMatch,
)
from namesake.reliability.memory_model import may_apply_away, policy_features
from namesake.reliability.memory_policy import (
    BY_HAND_GAIN,
    EVERY_TIME_GAIN,
    SAME_CONTEXT,
    BoostParams,
    boost_for,
    is_one_off,
    taught_here,
    with_teaching,
)
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.recall import may_inherit
from namesake.reliability.windows import function_words

P = BoostParams(threshold=0.85, score_weight=1.5, freq_weight=0.05, max_bonus=0.20)


@pytest.mark.parametrize(
    ("score", "freq", "bonus"),
    [
        (0.84, 50, 0.0),  # below the threshold: nothing, however frequent
        (0.85, 1, math.log(2) * 0.05),  # exactly at it: the frequency term alone
        (0.90, 1, 0.05 * 1.5 + math.log(2) * 0.05),
        (0.90, 9, 0.05 * 1.5 + math.log(10) * 0.05),  # more frequent, more bonus
        (1.00, 1000, 0.20),  # capped
    ],
)
def test_boost_formula(score: float, freq: int, bonus: float) -> None:
    assert boost_for(score, freq, P) == pytest.approx(bonus)


E = Existing(row_id=1, final_norm="meetnoo", source_suggestion_ids=("s1",))


@pytest.mark.parametrize(
    ("sid", "final", "same", "semantic", "outcome", "target"),
    [
        ("s1", "meetnoo", E, None, WriteOutcome.REPLAY, 1),
        ("s1", "meetnoo sas", E, None, WriteOutcome.REPLAY, 1),  # a replayed suggestion never changes anything
        ("s2", "meetnoo", E, None, WriteOutcome.REINFORCED, 1),
        (None, "meetnoo", E, None, WriteOutcome.REINFORCED, 1),
        ("s2", "meetnoo sas", E, None, WriteOutcome.CONFLICT, 1),  # another final, same place: both kept
        ("s2", "meetnoo sas", replace(E, same_scope=False), None, WriteOutcome.SUPERSEDED, 1),  # another place
        (
            "s2",
            "meetnoo sas",
            replace(E, in_conflict=True, other_final_norm="meetnoo sas"),
            None,
            WriteOutcome.SUPERSEDED,
            1,
        ),  # the conflict's other side taught again: chosen
        (
            "s2",
            "meet now",
            replace(E, in_conflict=True, other_final_norm="meetnoo sas"),
            None,
            WriteOutcome.CONFLICT,
            1,
        ),  # a third final: a conflict still
        ("s2", "3 velos", None, SemanticHit(7, 0.99, "3 velos"), WriteOutcome.REINFORCED, 7),
        ("s2", "4 velos", None, SemanticHit(7, 0.99, "3 velos"), WriteOutcome.NEW, None),  # changed value
        ("s2", "3 velos", None, SemanticHit(7, 0.94, "3 velos"), WriteOutcome.NEW, None),  # below dedupe
        ("s2", "3 velos", None, SemanticHit(None, 0.99, "3 velos"), WriteOutcome.NEW, None),  # no active row
        ("s2", "x", None, None, WriteOutcome.NEW, None),
    ],
)
def test_write_decision(
    sid: str | None, final: str, same: Existing | None, semantic: SemanticHit | None, outcome: WriteOutcome,
    target: int | None,
) -> None:  # fmt: skip
    d = consolidate(suggestion_id=sid, final_norm=final, same_original=same, semantic=semantic, dedupe_threshold=0.95)
    assert (d.outcome, d.target_row_id) == (outcome, target)


def test_words_a_twin_was_taught_over_come_back_as_often_as_they_were_heard_unless_held_by_their_own_fix() -> None:
    row = RememberedCorrection("any ex", "Amex", "ORG", "paid with any ex", 4, ReviewAction.ACCEPT, 3.0,
                               MemoryScope.LIST, "call-1", conflict=True, left_alone=2)  # fmt: skip
    entries: list[dict[str, object]] = []
    for taught_by, words in (("a", "annexes"), ("b", "Any-Ex"), ("c", "annex"), ("d", "Annexes"), ("e", "amex")):
        entries = with_heard(entries, row.original, heard_entry(words, f"around {taught_by}", ReviewAction.EDIT,
                                                                 taught_by))  # fmt: skip
    assert [e["original"] for e in entries] == ["annexes", "annex", "Annexes", "amex"]  # "Any-Ex": the row's own
    forms = heard_forms(row, entries, held=frozenset({"any ex", "annex"}))  # "annex" has a fix of its own
    assert [(f.original, f.frequency, f.context, f.action) for f in forms] == [
        ("Annexes", 2, "around d", ReviewAction.EDIT), ("amex", 1, "around e", ReviewAction.EDIT)
    ]  # fmt: skip
    assert all((f.final, f.scope, f.transcript_id, f.conflict, f.left_alone) == ("Amex", MemoryScope.LIST,
               "call-1", False, None) for f in forms)  # fmt: skip
    assert [e["original"] for e in without_taught_by(entries, "d")] == ["annexes", "annex", "amex"]


def test_every_memory_filter_carries_the_user() -> None:
    flt = memory_filter("alice", entity_type="PERSON", exclude_promoted=True, quarantine_after=5)
    assert Match("user_id", "alice") in flt.must
    with pytest.raises(InvalidInputError):
        memory_filter("")


def _taught(text: str, *fixes: RememberedCorrection, settings: Settings | None = None) -> dict[str, tuple[str, str]]:
    """What the pipeline does with each span of `text` for a user who taught `fixes`: {original: (final, decision)}."""
    inputs = PipelineInputs([Segment("1", text)], CanonicalDictionary(), user_id="u", remembered=list(fixes))
    kept, _ = run_stages(inputs, settings or Settings())
    return {c.original: (c.final, c.disposition.value) for c in kept}


def test_a_fix_taught_on_u_s_never_reaches_the_pronoun_us() -> None:
    fix = RememberedCorrection("u.s", "US", "LOCATION", "the u.s economy grew")
    assert "us" not in _taught("thanks for joining us today, all of us", fix)
    assert _taught("the u.s economy and the U.S. dollar", fix).get("u.s", ("", ""))[0] == "US"


def test_a_fix_taught_on_a_function_word_comes_back_among_the_words_it_was_taught_among() -> None:
    taught = "Thank you one and good morning, everyone. During the quarter"
    fix = RememberedCorrection("one", "Juan", "PERSON", taught, frequency=2, action=ReviewAction.MANUAL)
    found = _taught("Thank you one and good morning, everyone. The first quarter was one of the best.", fix)
    assert found["one"] == ("Juan", "auto_applied")  # "one" is left out of the spotter's windows, not the memory's
    assert "one" not in _taught("It was one of the best quarters in the history of the company.", fix)


def test_a_taught_pair_that_waits_for_the_reviewer_is_shown_above_the_fold_not_where_the_list_put_it() -> None:
    def line(*fixes: RememberedCorrection) -> list[Candidate]:
        inputs = PipelineInputs(
            [Segment("1", "Thanks, line. The line grew fast.")],
            CanonicalDictionary({"persons": ["Ryan"]}),
            user_id="u",
            remembered=list(fixes),
        )
        return [c for c in run_stages(inputs, Settings())[0] if c.original == "line"]  # fmt: skip

    assert line() == []  # the list alone does not propose it
    once = RememberedCorrection("line", "Ryan", "PERSON", action=ReviewAction.MANUAL)
    waiting = line(once)  # taught once by hand, nothing read the sentence: the reviewer decides, and sees it
    assert len(waiting) == 2 and {c.disposition for c in waiting} == {Disposition.PENDING}
    assert min(c.confidence for c in waiting) >= Settings().review_fold_below
    applied = line(replace(once, frequency=2))  # taught twice: applied, surer than one that waits
    assert {c.disposition for c in applied} == {Disposition.AUTO_APPLIED}
    assert min(c.confidence for c in applied) > max(c.confidence for c in waiting)


def test_a_look_alike_original_does_not_inherit_another_ones_fix() -> None:
    fix = RememberedCorrection("kword0233", "Kword A 0233", "KEYWORD")
    found = _taught("we shipped kword0417 and kword0233 this week", fix)
    assert "kword0417" not in found and found["kword0233"][0] == "Kword A 0233"


def test_a_pasted_final_is_never_applied_elsewhere() -> None:
    paste = "Backman Coulter announced today that its board approved " * 5  # a paste, 280 characters
    fix = RememberedCorrection("Backman", paste.strip(), "ORG", "we met Backman about it")
    assert is_one_off(paste) and not is_one_off("Beckman Coulter")
    found = _taught("we met Backman about it again", fix)
    assert all(decision != "auto_applied" for _, decision in found.values())
    short = RememberedCorrection("Backman", "Beckman", "ORG", "we met Backman about it")
    assert _taught("we met Backman about it again", short)["Backman"] == ("Beckman", "auto_applied")  # as before


def test_a_web_address_written_for_words_that_say_none_of_it_stays_where_it_was_taught() -> None:
    address = RememberedCorrection("Energous", "www.enagas.es", "ORG", "the first semester results of Energous",
                                   action=ReviewAction.MANUAL)  # fmt: skip
    heard = [Segment("1", "Companies like Energous are into that.")]
    listed = CanonicalDictionary({"organizations": ["Enagas"]})
    inputs = PipelineInputs(heard, listed, user_id="u", remembered=[address])
    kept, _ = run_stages(inputs, Settings())
    assert [(c.final, c.disposition.value) for c in kept if c.original == "Energous"] == [("Enagas", "auto_applied")]
    assert is_one_off("www.enagas.es", "Energous") and not is_one_off("YETI.com", "yet dot com")
    assert not is_one_off("YETI.com", "yeti.com") and not is_one_off("Enagas", "Energous")


@pytest.mark.parametrize(
    ("window", "original", "inherits"),
    [("us", "u.s", False), ("U.S", "u.s", True), ("kword0417", "kword0233", False), ("Cytovah", "Cytova", True),
     ("the", "The", True), ("and", "AND", True), ("Data Dog", "data dog", True), ("datadog", "Data Dog", False)],
)  # fmt: skip
def test_what_may_inherit_a_fix(window: str, original: str, inherits: bool) -> None:
    assert may_inherit(window, original, function_words("en")) is inherits


def _learned(folder: Path, logit: float) -> Settings:
    """Settings under a learned memory policy that answers `logit` whatever it reads (a model of no trees)."""
    path = folder / f"memory-{logit}.json"
    features = sorted(policy_features({}, 0.5))
    path.write_text(json.dumps({"features": features, "baseline": logit, "trees": [], "meta": {}}))
    return Settings(reliability_memory_policy="learned", reliability_memory_model=path)


def test_the_learned_policy_decides_whether_a_taught_fix_applies_by_itself(tmp_path: Path) -> None:
    fix = RememberedCorrection("Backman", "Beckman", "ORG", "we met Backman about it")
    text = "we met Backman about it again"
    assert _taught(text, fix, settings=_learned(tmp_path, 3.0))["Backman"] == ("Beckman", "auto_applied")
    assert _taught(text, fix, settings=_learned(tmp_path, -3.0))["Backman"] == ("Beckman", "pending")  # still shown
    paste = RememberedCorrection("Backman", ("Backman Coulter announced today that its board approved " * 5).strip(),
                                 "ORG", "we met Backman about it")  # fmt: skip
    assert all(d != "auto_applied" for _, d in _taught(text, paste, settings=_learned(tmp_path, 3.0)).values())
    assert policy_features({"remembered": 1.0, "lm_gain": -2.0}, 0.5)["read"] == 1.0  # the reading is a feature
    by_hand = TaughtMatch(1.0, 1.0, 3.0, action="manual", age_days=4.0).audit()
    assert by_hand["remembered_manual"] == 1.0 and by_hand["remembered_age_days"] == 4.0
    assert policy_features(by_hand, 0.5)["taught_by_hand"] == 1.0  # how it was taught is a feature
    assert "remembered_accept" not in TaughtMatch(1.0, 1.0, 3.0).audit()  # accepting is the usual way: not stored


def test_an_everyday_word_taught_elsewhere_is_applied_only_where_the_language_model_read_it() -> None:
    def features(everyday: float, context: float | None, gain: float | None) -> dict[str, float]:
        audit = {"remembered": 1.0, "remembered_frequency": 2.0, "remembered_everyday": everyday}
        if context is not None:
            audit["remembered_context"] = context
        if gain is not None:
            audit["lm_gain"] = gain
        return policy_features(audit, 0.01)

    assert not may_apply_away(features(5.6, None, None))  # "great" → Greg, nothing read: never by itself
    assert not may_apply_away(features(5.6, 0.2, None))  # nor where the words around differ
    assert may_apply_away(features(5.6, 0.6, None))  # where it was taught
    assert may_apply_away(features(5.6, None, -3.0))  # read here: the policy weighs the reading
    assert may_apply_away(features(1.2, None, None))  # "Cytova" is no everyday word


@pytest.mark.parametrize(
    ("original", "final", "scope"),
    [
        ("three", "III", MemoryScope.LIST),  # a number word: narrow
        ("ninety three", "93", MemoryScope.LIST),
        ("Crystal", "Christelle", MemoryScope.LIST),  # an everyday noun heard for a name
        ("Reiner", "Rainer", MemoryScope.USER),  # a rare word: the name wherever it is heard
        ("Data Dog", "Datadog", MemoryScope.USER),  # the form alone: the same name everywhere
    ],
)
def test_everyday_words_are_taught_narrow_by_default(original: str, final: str, scope: MemoryScope) -> None:
    assert default_scope(original, final, "en") == scope


def test_a_taught_fix_comes_back_only_within_its_scope() -> None:
    def taught(scope: MemoryScope) -> RememberedCorrection:
        return RememberedCorrection("three", "III", "KEYWORD", scope=scope, transcript_id="trial-1")

    trial_list = listed_values(CanonicalDictionary({"keywords": ["Phase III"], "orgs": ["III"]}))
    other_list = listed_values(CanonicalDictionary({"orgs": ["Globex"]}))
    places = [("trial-1", "trial", other_list), ("trial-2", "trial", trial_list), ("other", "other", other_list)]
    where = {
        (scope, tid, name): in_scope(taught(scope), tid, listed)
        for scope in MemoryScope
        for tid, name, listed in places
    }
    assert where == {
        (MemoryScope.TRANSCRIPT, "trial-1", "trial"): True, (MemoryScope.TRANSCRIPT, "trial-2", "trial"): False,
        (MemoryScope.TRANSCRIPT, "other", "other"): False,
        (MemoryScope.LIST, "trial-1", "trial"): True, (MemoryScope.LIST, "trial-2", "trial"): True,
        (MemoryScope.LIST, "other", "other"): False,
        (MemoryScope.USER, "trial-1", "trial"): True, (MemoryScope.USER, "trial-2", "trial"): True,
        (MemoryScope.USER, "other", "other"): True,
    }  # fmt: skip
    keep, away = split_by_scope([taught(MemoryScope.LIST), RememberedCorrection("Reiner", "Rainer", "PERSON")],
                                "other", other_list)  # fmt: skip
    assert [m.final for m in keep] == ["Rainer"] and away == frozenset({"three"})
    people = listed_values(CanonicalDictionary({"persons": ["Christelle Dupont"], "orgs": ["Data Dog"]}))
    named = RememberedCorrection("Crystal", "Christelle", "PERSON", scope=MemoryScope.LIST, transcript_id="t0")
    joined = RememberedCorrection("data dog", "DataDog", "ORG", scope=MemoryScope.LIST, transcript_id="t0")
    assert in_scope(named, "t9", people) and in_scope(joined, "t9", people)  # a word of a value, its compact form
    flt = memory_filter("ana", exclude_originals=away)
    assert MatchAny("original_norm", ("three",)) in flt.must_not


@pytest.mark.parametrize(
    ("original", "zipf", "times", "action", "gain", "applies"),
    [
        ("Cytova", 1.5, 1, ReviewAction.MANUAL, None, True),  # a word nobody uses: the user said what it is
        ("Sylvia", 3.6, 1, ReviewAction.ACCEPT, -17.9, True),  # the model's prior for a name is no argument
        ("done", 5.0, 1, ReviewAction.ACCEPT, None, False),  # everyday, taught once, nothing read it here
        ("done", 5.0, 1, ReviewAction.ACCEPT, -2.0, True),  # ... read nearly as likely as "done"
        ("done", 5.0, 1, ReviewAction.ACCEPT, -6.0, False),  # ... read far less likely
        ("well", 5.9, 1, ReviewAction.MANUAL, 1.0, False),  # one hand fix of an everyday word: the reviewer decides
        ("hands", 5.2, 1, ReviewAction.MANUAL, 5.1, True),  # ... unless the sentence reads the name clearly likelier
        ("hands", 5.2, 1, ReviewAction.MANUAL, None, False),  # ... which nothing read here
        ("Crystal", 4.4, 2, ReviewAction.ACCEPT, -9.6, True),  # taught twice: applied ...
        ("Crystal", 4.4, 2, ReviewAction.ACCEPT, -25.0, False),  # ... unless the sentence rules the name out
        ("us", 6.04, 3, ReviewAction.ACCEPT, 1.8, False),  # as common as a function word, however often taught
        ("ninety three", 6.5, 2, ReviewAction.ACCEPT, -3.0, True),  # several words: taught twice, applied
    ],
)
def test_teaching_is_evidence_within_its_bounds(
    original: str, zipf: float, times: int, action: ReviewAction, gain: float | None, applies: bool
) -> None:
    c = Candidate("1", 0, len(original), original, "Name", "PERSON", "memory")
    c.taught = TaughtMatch(1.0, float(times), zipf, None, action=action)
    if gain is not None:
        c.signals["lm_gain"] = gain
    assert taught_here(c) is applies
    lifted = with_teaching(c, 0.1)
    assert (lifted > 0.5) is applies and lifted >= 0.1  # where it applies, teaching lifts it past the auto bar


@pytest.mark.parametrize(
    ("times", "action", "left_alone", "gain", "applies"),
    [
        (1, ReviewAction.MANUAL, None, 0.0, False),  # once by hand, nothing known of the rest: the model must say so
        (1, ReviewAction.MANUAL, 0, EVERY_TIME_GAIN, True),  # ... fixed by hand every time it was heard there
        (1, ReviewAction.MANUAL, 0, EVERY_TIME_GAIN - 0.5, False),  # ... but not against a sentence that rules it out
        (1, ReviewAction.MANUAL, 1, EVERY_TIME_GAIN, False),  # ... one kept as said there: the hand fix's own bar
        (1, ReviewAction.ACCEPT, 0, EVERY_TIME_GAIN, True),  # accepted where nothing was left alone: teaching says more
        (1, ReviewAction.ACCEPT, 0, EVERY_TIME_GAIN - 0.5, False),  # ... but not against a sentence that rules it out
        (1, ReviewAction.ACCEPT, 1, EVERY_TIME_GAIN, False),  # one kept as said: the accepted pair's own bar
        (2, ReviewAction.ACCEPT, 4, -10.0, True),  # taught twice: applied unless the sentence rules the name out
    ],
)
def test_what_the_reviewer_left_alone_where_they_taught_it_bounds_an_everyday_pair_taught_once(
    times: int, action: ReviewAction, left_alone: int | None, gain: float | None, applies: bool
) -> None:
    c = Candidate("1", 0, 4, "line", "Ryan", "PERSON", "memory")
    c.taught = TaughtMatch(1.0, float(times), 5.2, None, action=action, left_alone=left_alone)
    if gain is not None:
        c.signals["lm_gain"] = gain
    assert taught_here(c) is applies
    assert ("remembered_left_alone" in c.taught.audit()) is (left_alone is not None)


@pytest.mark.parametrize(
    ("left_alone", "gain", "applies"),
    [
        (0, -24.0, True),  # words around alike to where it was taught: the user said what it is here
        (1, -24.0, True),  # ... kept as said once, fixed once
        (11, -24.0, False),  # kept as said eleven times there: mostly the word, the words around are not enough
        (11, BY_HAND_GAIN + 1, True),  # ... unless the sentence reads the name clearly likelier
    ],
)
def test_words_around_alike_apply_a_fix_taught_once_unless_the_reviewer_mostly_kept_those_words(
    left_alone: int, gain: float, applies: bool
) -> None:
    c = Candidate("1", 0, 4, "line", "Ryan", "PERSON", "memory")
    c.taught = TaughtMatch(1.0, 1.0, 5.2, SAME_CONTEXT, action=ReviewAction.MANUAL, left_alone=left_alone)
    c.signals["lm_gain"] = gain
    assert taught_here(c) is applies
