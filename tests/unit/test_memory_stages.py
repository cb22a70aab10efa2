"""Golden tables for the stages where the user's memory speaks: refusals, taught fixes and their spans."""

from __future__ import annotations

from dataclasses import replace

import pytest

from namesake.core.settings import Settings
from namesake.domain.types import (
    Candidate,
    CanonicalDictionary,
    Disposition,
    RememberedCorrection,
    ReviewAction,
    Segment,
    TaughtMatch,
)
from namesake.reliability import refusal_policy
from namesake.reliability.gate import apply_gate
from namesake.reliability.memory_policy import memory_bounds, take_remembered_final
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.refusal_policy import apply_refusals, mark_refusals, refusal_key, refusal_stands
from namesake.reliability.score import Scorer, resolve_overlaps, score_candidates
from namesake.reliability.spot import spot_candidates

DICT = CanonicalDictionary(
    {
        "persons": ["Rainer Blair", "Gugino", "Matt Gugino", "Bérangère Dupuis"],
        "orgs": ["Cytiva", "Cementos Argos", "Meetnoo"],
        "acronyms": ["IDT", "EBITDA", "SNCF"],
        "places": ["Colombia"],
    }
)


def _spot(text: str, **kw: object) -> list[Candidate]:
    seg = [Segment("s1", text)]
    cands = spot_candidates(seg, DICT.entries(), min_similarity=0.7, max_tokens=4, **kw)  # type: ignore[arg-type]
    return apply_gate(cands, DICT.entries()).passed


def _pairs(cands: list[Candidate]) -> set[tuple[str, str]]:
    return {(c.original, c.final) for c in cands}


W = Scorer.from_settings(Settings())


def test_refused_pairs_are_never_proposed_again() -> None:
    segs = [Segment("1", "Reiner Blair thanked Cytova.")]
    kept, stats = run_stages(PipelineInputs(segs, DICT, refused={("cytova", "cytiva"): 1}), Settings())
    assert ("Cytova", "Cytiva") not in {(c.original, c.final) for c in kept}
    assert stats.refused_by_user == 1


def test_a_pair_the_user_made_more_often_than_refused_is_judged_on_its_signals_alone() -> None:
    segs = [Segment("1", "Reiner Blair thanked Cytova.")]
    fresh = {(c.original, c.final): c for c in run_stages(PipelineInputs(segs, DICT), Settings())[0]}
    memo = [RememberedCorrection("Cytova", "Cytiva", "ORG", frequency=2)]
    inputs = PipelineInputs(segs, DICT, refused={("cytova", "cytiva"): 1}, remembered=memo)
    kept, stats = run_stages(inputs, Settings())
    contested = {(c.original, c.final): c for c in kept}[("Cytova", "Cytiva")]
    before = contested.confidence
    contested.memory_bonus = 0.2  # what the reader would add: ignored for a contested pair
    score_candidates([contested], W)
    assert contested.contested and not contested.refused_as_often and stats.refused_by_user == 0
    assert contested.confidence == before and contested.disposition is fresh[("Cytova", "Cytiva")].disposition
    assert fresh[("Cytova", "Cytiva")].disposition is Disposition.AUTO_APPLIED


def test_a_pair_refused_as_often_as_it_was_made_is_left_to_a_reviewer() -> None:
    segs = [Segment("1", "Reiner Blair thanked Cytova.")]
    memo = [RememberedCorrection("Cytova", "Cytiva", "ORG", frequency=2)]
    inputs = PipelineInputs(segs, DICT, refused={("cytova", "cytiva"): 2}, remembered=memo)
    kept, _ = run_stages(inputs, Settings())
    contested = {(c.original, c.final): c for c in kept}[("Cytova", "Cytiva")]
    assert contested.contested and contested.refused_as_often and contested.reviewer_decides
    assert contested.disposition is Disposition.PENDING and contested.audit()["refused_as_often"] == 1.0


def test_near_spellings_of_a_remembered_original_get_the_users_final() -> None:
    memo = [RememberedCorrection("Steffi", "Cepheid", "ORG")]
    cands = _spot("the Steffy and Steffi products", remembered=memo)
    found = {(c.original, c.final): c.taught.similarity for c in cands if c.source == "memory" and c.taught}
    assert found[("Steffi", "Cepheid")] == 1.0
    assert 0.8 <= found[("Steffy", "Cepheid")] < 1.0


def test_the_memory_alone_never_auto_applies_but_lifts_what_the_signals_support() -> None:
    d = CanonicalDictionary({"orgs": ["Cytiva"], "acronyms": ["GMA"]})
    seg = [Segment("1", "so uh we bought Cytova")]
    fresh = {c.original: c for c in run_stages(PipelineInputs(seg, d), Settings())[0]}
    assert "uh" not in fresh and fresh["Cytova"].confidence >= W.suggest
    memo = [RememberedCorrection("uh", "GMA", "ACRONYM"), RememberedCorrection("Cytova", "Cytiva", "ORG")]
    kept, _ = run_stages(PipelineInputs(seg, d, remembered=memo), Settings())
    for c in kept:  # the reader's bonus, as a user who made both corrections often would get it
        c.signals["memory_bonus"] = 0.2
    score_candidates(kept, W)
    by = {c.original: c for c in kept}
    # "uh" → "GMA" was right once, somewhere: shown to the reviewer, never applied on its own
    assert by["uh"].disposition is Disposition.PENDING
    assert by["Cytova"].disposition is Disposition.AUTO_APPLIED


def test_a_refusal_holds_for_every_span_that_carries_it() -> None:
    def cand(original: str, final: str = "Acme") -> Candidate:
        return Candidate("1", 0, len(original), original, final, "ORG", "rag")

    readings = [cand("Acne"), cand("for Acne"), cand("Acne Corp"), cand("Acme", "Acme Corp"), cand("Acnes")]
    kept = apply_refusals(readings, {refusal_key("Acne", "Acme"): 1}, [])
    assert [c.original for c in kept] == ["Acme", "Acnes"]  # wider spans carry it; another word does not
    narrower = apply_refusals([cand("Acne")], {refusal_key("for Acne", "Acme"): 1}, [])
    assert [c.original for c in narrower] == ["Acne"]  # a refusal of a span that ate a word refuses only that
    made = [RememberedCorrection("for Acne", "Acme", "ORG", frequency=3)]
    made_too = apply_refusals([cand("for Acne")], {refusal_key("for Acne", "Acme"): 1}, made)
    assert made_too[0].contested and not made_too[0].refused_as_often  # made more often: the signals decide
    twice = apply_refusals([cand("for Acne")], {refusal_key("for Acne", "Acme"): 3}, made)
    assert twice[0].refused_as_often  # refused as often as made: a reviewer decides
    a_part = apply_refusals([cand("for Acne")], {refusal_key("Acne", "Acme"): 3}, made)
    assert not a_part[0].contested and not a_part[0].refused  # they made these words; they refused only a part


def test_a_refused_pair_comes_back_only_where_its_sentence_reads_it_and_it_would_apply() -> None:
    def refused(gain: float | None, disposition: Disposition = Disposition.AUTO_APPLIED) -> Candidate:
        c = Candidate("1", 0, 3, "one", "Juan", "PERSON", "rag", disposition=disposition, refused=1)
        if gain is not None:
            c.signals["lm_gain"] = gain
        return c

    bar = refusal_policy.REFUSED_READ_GAIN
    assert not refusal_stands(refused(bar))  # "Juan said": the sentence says it is the name
    assert refusal_stands(refused(bar - 0.5))  # "one of the best", where it was refused
    assert refusal_stands(refused(None))  # not read: the refusal holds
    assert refusal_stands(refused(bar + 5, Disposition.PENDING))  # a refused pair is never queued again
    assert not refusal_stands(Candidate("1", 0, 3, "one", "Juan", "PERSON", "rag"))  # never refused
    marked = mark_refusals([Candidate("1", 0, 3, "one", "Juan", "PERSON", "rag")], {refusal_key("one", "Juan"): 2}, [])
    assert marked[0].refused == 2 and marked[0].audit()["refused"] == 2.0
    # the user taught these words another final: they said what the words are, the refusal is for good
    columbia = Candidate("1", 0, 8, "columbia", "Columbia", "LOCATION", "rag")
    taught = [RememberedCorrection("columbia", "Colombia", "LOCATION")]
    assert mark_refusals([columbia], {refusal_key("columbia", "Columbia"): 1}, taught) == []


def test_a_refused_pair_comes_back_where_it_reads_far_likelier_than_where_it_was_refused() -> None:
    def refused(gain: float, there: float | None) -> Candidate:
        c = Candidate("1", 0, 7, "airlock", "AirLOG", "ORG", "rag", disposition=Disposition.AUTO_APPLIED, refused=1)
        c.signals["lm_gain"] = gain
        if there is not None:
            c.signals[refusal_policy.REFUSED_READ] = there
        return c

    by = refusal_policy.REFUSED_BETTER_BY
    assert not refusal_stands(refused(-16.8 + by, -16.8))  # "based on airlock and followed by C log"
    assert refusal_stands(refused(-16.8 + by - 0.5, -16.8))  # read about as where it was refused
    assert refusal_stands(refused(-7.3, None))  # a rejection nobody read: nothing to compare with
    # only a refusal of these very words carries how it read there (a wider span's reading says nothing of it)
    there = {refusal_key("airlock", "AirLOG"): -16.8}
    exact = Candidate("1", 0, 7, "airlock", "AirLOG", "ORG", "rag")
    wider = Candidate("1", 0, 11, "the airlock", "AirLOG", "ORG", "rag")
    marked = mark_refusals([exact, wider], {refusal_key("airlock", "AirLOG"): 1}, [], there)
    assert [c.refused for c in marked] == [1, 1]
    assert [c.signals.get(refusal_policy.REFUSED_READ) for c in marked] == [-16.8, None]


@pytest.mark.parametrize("policy", ["rules", "learned"])
def test_a_taught_fix_is_applied_where_it_was_taught_and_only_shown_elsewhere(policy: str) -> None:
    nothing = CanonicalDictionary({})
    memo = [
        RememberedCorrection("Zorblax", "Zorbleks", "ORG"),  # no everyday word: applied wherever it comes back
        RememberedCorrection("cap", "Capgemini", "ORG", context="our partner cap signed the outsourcing deal"),
    ]
    segs = [
        Segment("1", "we called Zorblax yesterday"),
        Segment("2", "the outsourcing deal with our partner cap was signed"),  # the context it was taught in
        Segment("3", "put the cap back on the bottle"),  # an everyday word somewhere else
    ]
    kept, _ = run_stages(PipelineInputs(segs, nothing, remembered=memo), Settings(reliability_memory_policy=policy))
    by = {(c.segment_id, c.original): c.disposition for c in kept}
    assert by[("1", "Zorblax")] is Disposition.AUTO_APPLIED
    # the hand rules apply an everyday word taught once where the words around match; the learned policy,
    # which saw such fixes go wrong, waits for more (a second teaching, or other signals) and shows it
    assert by[("2", "cap")] is (Disposition.AUTO_APPLIED if policy == "rules" else Disposition.PENDING)
    assert by[("3", "cap")] is Disposition.PENDING


def test_what_the_user_taught_wins_its_span_rewrites_a_canonical_spelling_where_taught_and_no_more() -> None:
    d = CanonicalDictionary({"places": ["Colombia"], "keywords": ["COVID-19"]})
    memo = [
        RememberedCorrection("Kobe 19", "COVID-19", "KEYWORD"),  # the spotter reads "Kobe" → COVID-19 on its own
        RememberedCorrection("Colombia", "Columbia", "ORG", context="shares of Colombia Sportswear rose in Portland"),
        RememberedCorrection("crystal", "Christelle", "PERSON", frequency=2),
        RememberedCorrection("great", "Greg", "PERSON", frequency=2),
        RememberedCorrection("done", "Don", "PERSON"),
        RememberedCorrection("us", "US", "LOCATION", frequency=3),
        RememberedCorrection("90", "ING", "ORG"),
    ]
    segs = [
        Segment("1", "cases of Kobe 19 rose"),
        Segment("2", "shares of Colombia Sportswear rose"),  # where it was taught: the user's fix applies
        Segment("3", "our plants in Colombia grew"),  # the country, elsewhere: shown, the canonical spelling stays
        Segment("4", "thanks great for the question"),
        Segment("5", "when you are 90 days past due"),
        Segment("6", "our plants in colombia grew"),  # the list's own form fix keeps its span
        Segment("7", "thanks done and over to you"),
        Segment("8", "they told us that on the call"),
        Segment("9", "thanks crystal for the question"),
    ]
    kept, _ = run_stages(PipelineInputs(segs, d, remembered=memo), Settings())
    by = {(c.segment_id, c.original): (c.final, c.disposition) for c in kept}
    assert by[("1", "Kobe 19")] == ("COVID-19", Disposition.AUTO_APPLIED) and ("1", "Kobe") not in by
    assert by[("2", "Colombia")] == ("Columbia", Disposition.AUTO_APPLIED)
    assert by[("3", "Colombia")] == ("Columbia", Disposition.PENDING)  # the list and the user disagree: a reviewer
    assert ("3", "Colombia") in {(c.segment_id, c.original) for c in kept if c.rewrites_canonical}
    assert by[("6", "colombia")] == ("Colombia", Disposition.AUTO_APPLIED)
    # teaching is evidence: an everyday word taught twice applies (unless the language model rules it out, unread here)
    assert by[("9", "crystal")] == ("Christelle", Disposition.AUTO_APPLIED)
    assert by[("4", "great")] == ("Greg", Disposition.PENDING)  # nearly as common as a function word (Zipf 5.9)
    assert by[("7", "done")] == ("Don", Disposition.PENDING)  # taught once, and nothing read it as right here
    assert by[("8", "us")] == ("US", Disposition.PENDING)  # as common as a function word: only where it was taught
    assert by[("5", "90")] == ("ING", Disposition.PENDING)  # a number is never a name on its own


def test_a_taught_fix_takes_its_span_from_a_reading_inside_it_with_that_readings_decision() -> None:
    def taught(original: str, final: str, *, one_off: bool = False) -> Candidate:
        taught = TaughtMatch(1.0, 1.0, 3.0, one_off=one_off)
        return Candidate("s", 0, len(original), original, final, "ORG", "memory", confidence=0.3,
                         disposition=Disposition.PENDING, taught=taught)  # fmt: skip

    def reading(end: int) -> Candidate:
        return Candidate("s", 0, end, "yeti"[:end], "YETI", "ORG", "rag", confidence=0.95,
                         disposition=Disposition.AUTO_APPLIED)  # fmt: skip

    fix = taught("yeti dot", "YETI.com")
    assert [k.final for k in resolve_overlaps([fix, reading(4)])] == ["YETI.com"]  # the user's final wins the span
    assert fix.covers_reading is Disposition.AUTO_APPLIED and fix.audit()["covers_reading"] == 2.0
    # re-decided after the memory and the language model: still at least what the reading inside it was
    assert memory_bounds(fix, 0.3, Disposition.PENDING, 0.5) is Disposition.AUTO_APPLIED
    paste = taught("yeti dot", "YETI.com is the best cooler company there is, " * 3, one_off=True)
    assert [k.final for k in resolve_overlaps([paste, reading(4)])] == ["YETI"]  # a paste never takes over
    wider = Candidate("s", 0, 12, "yeti dot com", "YETI.com", "ORG", "rag", confidence=0.9,
                      disposition=Disposition.AUTO_APPLIED)  # fmt: skip
    narrow = taught("yeti", "Yeti Holdings")
    assert [k.final for k in resolve_overlaps([narrow, wider])] == ["YETI.com"]  # a wider reading is not inside it
    assert narrow.covers_reading is None


def test_a_final_the_vector_memory_swapped_in_is_never_applied_by_itself() -> None:
    """The signals judged "yeti" → YETI; the memory's "YETI's" (taught on "yetis") is the reviewer's call, and where
    those signals alone would apply YETI, YETI applies."""
    c = Candidate("s", 0, 4, "yeti", "YETI", "ORG", "rag", confidence=0.95, disposition=Disposition.AUTO_APPLIED)
    take_remembered_final(c, "YETI's")
    assert (c.final, c.proposed_final, c.source) == ("YETI's", "YETI", "memory")
    assert memory_bounds(c, 0.3, Disposition.AUTO_APPLIED, 0.5) is Disposition.PENDING  # the bonus made it sure
    assert c.final == "YETI's"
    assert memory_bounds(c, 0.95, Disposition.AUTO_APPLIED, 0.5) is Disposition.AUTO_APPLIED
    assert (c.final, c.proposed_final, c.source) == ("YETI", None, "rag")
    kept = Candidate("s", 0, 4, "yeti", "YETI", "ORG", "rag", confidence=0.95)
    take_remembered_final(kept, "yeti")  # the same final in another case: nothing swapped, nothing capped
    assert kept.proposed_final is None
    assert memory_bounds(kept, 0.95, Disposition.AUTO_APPLIED, 0.5) is Disposition.AUTO_APPLIED


def test_two_finals_taught_for_a_listed_spelling_are_shown_for_the_reviewer_to_choose_and_applied_by_neither() -> None:
    # "cepheids" → Cepheid's accepted, then "cepheids" → Cepheid made by hand in the same call: a conflict, on words
    # the list writes as one of its values (Cepheid's)
    segs = [Segment("1", "you know for cepheids there presumably be less rule out flu testing")]
    lists = CanonicalDictionary({"orgs": ["Cepheid's", "Cepheid", "Beckman"]})
    made = RememberedCorrection("cepheids", "Cepheid", "ORG", action=ReviewAction.MANUAL)
    refused = {refusal_key("cepheids", "Cepheid's"): 2}

    def shown(conflict: bool, refusals: dict[tuple[str, str], int]) -> list[tuple[str, str, Disposition]]:
        memo = [replace(made, conflict=conflict)]
        kept, _ = run_stages(PipelineInputs(segs, lists, remembered=memo, refused=refusals), Settings())
        assert all(c.confidence >= 0.3 for c in kept)  # above the review page's fold
        return [(c.final, c.source, c.disposition) for c in kept]

    assert shown(False, {}) == [("Cepheid's", "rag", Disposition.AUTO_APPLIED)]  # the list's own form fix
    assert shown(True, {}) == [("Cepheid's", "rag", Disposition.PENDING)]  # either side may be right: not by itself
    assert shown(True, refused) == [("Cepheid", "memory", Disposition.PENDING)]  # the other side refused: this one
