"""Golden tables per pipeline stage: spotting, gate, scorer, decision, overlaps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from namesake.core.settings import Settings
from namesake.domain.types import (
    Candidate,
    CanonicalDictionary,
    Disposition,
    Mode,
    RememberedCorrection,
    Segment,
    spoken_forms,
)
from namesake.reliability.gate import apply_gate
from namesake.reliability.memory_policy import take_remembered_final
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.score import Scorer, confidence, dispose, resolve_overlaps, score_candidates
from namesake.reliability.spot import spot_candidates, token_set_similarity, word_for_letters

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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thanks Reiner for that", ("Reiner", "Rainer")),  # edit + phonetic, trimmed to the changed word
        ("the Reiner Blair era", ("Reiner", "Rainer")),
        ("thanks That Gugino", ("That", "Matt")),  # the right "Gugino" is left as written
        ("we bought Cytova last year", ("Cytova", "Cytiva")),
        ("the Mitnou platform", ("Mitnou", "Meetnoo")),  # phonetic key, French-style spelling
        ("Béranger Dupuis a parlé", ("Béranger", "Bérangère")),  # accents
        ("on a pris la es en sea ef", ("es en sea ef", "SNCF")),  # acronym spelled as letter names
    ],
)
def test_spotting_finds_the_misrecognised_span(text: str, expected: tuple[str, str]) -> None:
    cands = _spot(text)
    assert expected in _pairs(cands)
    for c in cands:
        assert text[c.start_char : c.end_char] == c.original


@pytest.mark.parametrize(
    "text",
    [
        "Rainer Blair opened the call",
        "we bought I D T",  # right but for spaces: the yardstick and the gate agree
        "our EBITDA grew",
        "we are in Colombia, uh, growing",  # no eating neighbours of a right entity
        "Cytiva and Gugino",
        "the Goldsteins and Colombias",  # plurals of canonical names are right as written
    ],
)
def test_right_entities_are_never_touched(text: str) -> None:
    cands = _spot(text)
    assert all(c.original.casefold() not in {"colombia", "cytiva", "gugino", "ebitda"} for c in cands)
    for c in cands:
        assert "Rainer" not in c.original and "Colombia" not in c.original


def test_gate_counts_spans_not_entries() -> None:
    seg = [Segment("s1", "Cytiva, Cytiva and IDT")]
    raw = spot_candidates(seg, DICT.entries(), min_similarity=0.7, max_tokens=4)
    assert apply_gate(raw, DICT.entries()).gated == 3


def test_remembered_originals_are_found_exactly() -> None:
    memo = [RememberedCorrection("zorblax", "Zorblax Corp", "ORG")]
    cands = _spot("we met zorblax today", remembered=memo)
    assert ("zorblax", "Zorblax Corp") in _pairs(cands)
    assert [c.source for c in cands if c.final == "Zorblax Corp"] == ["memory"]


def test_token_set_similarity_guards_subsets() -> None:
    # a subset scores 100 on token_set_ratio; the length guard keeps it from looking like a match
    assert token_set_similarity("Blair", "Rainer Blair") < 0.5
    assert token_set_similarity("Reiner Blair", "Rainer Blair") > 0.8


W = Scorer.from_settings(Settings())


def test_confidence_rises_with_evidence_and_falls_for_common_words() -> None:
    strong = {"edit": 0.9, "rag": 0.9, "phonetic": 1.0, "frequency": 1.0, "length": 1.0, "capitalised": 1.0}
    common = dict(strong, commonness=5.5 / 7)
    assert confidence(strong, W) > confidence(common, W)
    assert confidence(dict(strong, llm=1.0), W) > confidence(strong, W) > confidence(dict(strong, llm=-1.0), W)
    assert confidence(strong, W, bonus=0.2) == pytest.approx(min(1.0, confidence(strong, W) + 0.2))
    assert 0.0 <= confidence({}, W) <= 1.0


@pytest.mark.parametrize(
    ("conf", "decision"),
    [(0.95, Disposition.AUTO_APPLIED), (W.auto_apply, Disposition.AUTO_APPLIED), (W.suggest, Disposition.PENDING),
     (W.suggest - 0.01, Disposition.DROPPED), (0.0, Disposition.DROPPED)],
)  # fmt: skip
def test_decision_thresholds(conf: float, decision: Disposition) -> None:
    assert dispose(Candidate("1", 0, 3, "abc", "abd", "ORG", "rag", confidence=conf), W) is decision


def test_a_rewrite_the_language_model_read_has_its_own_bars() -> None:
    """The second trees' probability is applied from READ_AUTO_APPLY and shown from READ_SUGGEST; unread, the usual."""
    assert W.reading is not None and W.read_suggest <= W.suggest < W.auto_apply < W.read_auto_apply
    w = replace(W, suggest=0.2, read_suggest=0.15)  # apart, to tell them apart (the defaults may be one)

    def cand(conf: float, read: bool) -> Candidate:
        signals = {"lm_gain": 1.0} if read else {}
        return Candidate("1", 0, 3, "abc", "abd", "ORG", "rag", confidence=conf, signals=signals)

    between = (w.read_suggest + w.suggest) / 2
    assert dispose(cand(between, read=True), w) is Disposition.PENDING
    assert dispose(cand(between, read=False), w) is Disposition.DROPPED
    assert dispose(cand(w.read_suggest - 0.01, read=True), w) is Disposition.DROPPED
    assert dispose(cand(w.auto_apply, read=True), w) is Disposition.PENDING
    assert dispose(cand(w.read_auto_apply, read=True), w) is Disposition.AUTO_APPLIED


def test_a_confidence_does_not_move_with_the_thresholds() -> None:
    strong = {"edit": 0.9, "rag": 0.9, "phonetic": 1.0, "frequency": 1.0, "length": 1.0, "capitalised": 1.0}
    moved = replace(W, auto_apply=0.8, suggest=0.3)
    cands = [Candidate("1", 0, 3, "abc", "abd", "ORG", "rag", signals=dict(strong)) for _ in range(2)]
    score_candidates(cands[:1], W)
    score_candidates(cands[1:], moved)
    assert cands[0].confidence == cands[1].confidence  # only the decision reads the thresholds


def test_overlaps_keep_the_most_confident() -> None:
    a = Candidate("s", 0, 10, "x", "A", "ORG", "rag", confidence=0.5)
    b = Candidate("s", 5, 12, "y", "B", "ORG", "rag", confidence=0.8)
    c = Candidate("s", 12, 15, "z", "C", "ORG", "rag", confidence=0.3)
    assert [k.final for k in resolve_overlaps([a, b, c])] == ["B", "C"]


def test_run_stages_end_to_end_and_context_free_without_dictionary() -> None:
    segs = [Segment("1", "Reiner Blair thanked Cytova."), Segment("2", "Rainer Blair answered.")]
    kept, stats = run_stages(PipelineInputs(segs, DICT), Settings())
    assert stats.mode == Mode.RAG_ENHANCED and stats.gate_hits >= 1
    assert {(c.original, c.final) for c in kept} >= {("Reiner", "Rainer"), ("Cytova", "Cytiva")}
    assert all(c.disposition is not Disposition.DROPPED for c in kept)
    kept, stats = run_stages(PipelineInputs(segs, CanonicalDictionary({})), Settings())
    assert stats.mode == Mode.CONTEXT_FREE and kept == []


def test_completing_a_right_entity_is_only_ever_a_pending_suggestion() -> None:
    d = CanonicalDictionary({"orgs": ["ConocoPhillips"], "persons": ["Phillips"]})
    seg = [Segment("1", "we sold to Conical Phillips last year")]
    raw = spot_candidates(seg, d.entries(), min_similarity=0.7, max_tokens=4)
    passed = apply_gate(raw, d.entries()).passed
    conoco = [c for c in passed if c.final == "ConocoPhillips"]
    assert conoco and all(c.extends_right_entity for c in conoco)
    sure = Candidate("1", 11, 18, "Conical", "ConocoPhillips", "ORG", "rag", confidence=0.99)
    assert dispose(sure, W) is Disposition.AUTO_APPLIED
    sure.extends_right_entity = True
    assert dispose(sure, W) is Disposition.PENDING  # however confident: a reviewer decides


AMPERSANDS = CanonicalDictionary({"acronyms": ["M&A", "Q&A"], "orgs": ["Coolers & Equipment", "Q and A Partners"]})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("our M and A pipeline", ("M and A", "M&A")),  # "&" as said, a spelling fix
        ("then a q and a session", ("q and a", "Q&A")),
        ("we sell coolers and equipment", ("and", "&")),  # the words already right stay as written
    ],
)
def test_an_ampersand_said_as_and_is_written_as_canonical(text: str, expected: tuple[str, str]) -> None:
    seg = [Segment("s1", text)]
    raw = spot_candidates(seg, AMPERSANDS.entries(), min_similarity=0.7, max_tokens=4)
    passed = apply_gate(raw, AMPERSANDS.entries()).passed
    assert expected in _pairs(passed)
    kept, _ = run_stages(PipelineInputs(seg, AMPERSANDS), Settings())
    auto = [(c.original, c.final) for c in kept if c.disposition is Disposition.AUTO_APPLIED]
    assert auto == [expected]


@pytest.mark.parametrize(
    "text", ["over to Q and then", "we got a quite a quarter", "the M&A market", "our Q and A Partners"]
)
def test_a_spoken_form_matches_only_as_said_and_never_shields_itself(text: str) -> None:
    # "Q and" is not Q&A; a written canonical value (or a listed spoken one) is right as written
    kept, _ = run_stages(PipelineInputs([Segment("s1", text)], AMPERSANDS), Settings())
    assert kept == []


WEB = CanonicalDictionary({"keywords": ["YETI.com", "www.sec.gov", ".revgroup.com"], "acronyms": ["U.S.", "D.C"]})


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("YETI.com", ["YETI dot com", "YETI point com"]),
        ("www.sec.gov", ["www dot sec dot gov", "www point sec point gov"]),
        (".revgroup.com", ["revgroup dot com", "revgroup point com"]),  # as a list may write it
        ("U.S.", []),  # abbreviations and versions are not said with "dot"
        ("J.P. Morgan", []),
        ("D.C", []),
        ("IntelliDrive 2.0", []),
        ("M&A", ["M and A", "M et A"]),
    ],
)
def test_a_web_address_is_said_with_its_dots(value: str, said: list[str]) -> None:
    assert spoken_forms(value) == said


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the standout was yeti dot com this quarter", ("yeti dot com", "YETI.com")),
        ("growth on Yeti dotcom", ("Yeti dotcom", "YETI.com")),
        ("visit rev group dot com for the slides", ("rev group dot com", ".revgroup.com")),
    ],
)
def test_a_web_address_said_aloud_is_spotted_as_its_written_form(text: str, expected: tuple[str, str]) -> None:
    seg = [Segment("s1", text)]
    raw = spot_candidates(seg, WEB.entries(), min_similarity=0.7, max_tokens=4)
    passed = apply_gate(raw, WEB.entries()).passed
    spoken = [c for c in passed if c.signals.get("spoken_form")]
    assert [(c.original, c.final) for c in spoken] == [expected]


def test_a_web_address_said_aloud_wins_over_the_readings_of_its_name_inside_it() -> None:
    # "yeti" → YETI and "dot com" → YETI.com (a fuzzy reading) made "YETI YETI.com"; the spoken form completes the
    # right entity "yeti" rather than swallowing it, so it is not held for a reviewer as "Conical Phillips" is
    d = CanonicalDictionary({"orgs": ["YETI", "Amazon"], "keywords": ["YETI.com", "Drinkware"]})
    kept, _ = run_stages(PipelineInputs([Segment("s1", "the standout was yeti dot com this quarter")], d), Settings())
    assert [(c.original, c.final, c.disposition) for c in kept] == [
        ("yeti dot com", "YETI.com", Disposition.AUTO_APPLIED)
    ]


def test_among_equal_decisions_a_name_said_as_listed_wins_over_a_surer_reading_inside_it() -> None:
    said = Candidate("s1", 4, 16, "yeti dot com", "YETI.com", "KEYWORD", "rag", confidence=0.7)
    said.signals["spoken_form"] = 1.0
    inside = Candidate("s1", 4, 8, "yeti", "YETI", "ORG", "rag", confidence=0.95)
    other = Candidate("s1", 4, 8, "yeti", "Yetis", "ORG", "rag", confidence=0.99)  # not of the same name
    for c in (said, inside, other):
        c.disposition = Disposition.AUTO_APPLIED
    assert resolve_overlaps([inside, said]) == [said]
    assert resolve_overlaps([other, said]) == [other]  # confidence decides, as before
    said.disposition = Disposition.PENDING
    assert resolve_overlaps([inside, said]) == [inside]  # the stronger decision first, as before


def test_the_dots_and_domain_of_a_web_address_alone_are_not_read_as_it() -> None:
    # "travelers dot com" with YETI.com listed: "dot com" alone sounded 0.67 like "YETI com" and was applied
    seg = [Segment("s1", "find it on travelers dot com or www dot com")]
    raw = spot_candidates(seg, WEB.entries(), min_similarity=0.5, max_tokens=4)
    assert {c.original for c in raw if c.final in ("YETI.com", "www.sec.gov", ".revgroup.com")} == set()
    kept, _ = run_stages(PipelineInputs(seg, WEB), Settings())
    assert [c.original for c in kept if c.final == "YETI.com"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so yet dot com is the strongest", {"yet dot com"}),  # the name misheard, its dot and domain said
        ("rev grip dot com has the slides", {"rev grip dot com"}),
        ("find it on travelers dot com", set()),  # another name: only the shared "dot com" sounds alike
        ("jenny dot com led the quarter", set()),
    ],
)
def test_a_web_address_said_with_its_name_misheard_is_read_as_it(text: str, expected: set[str]) -> None:
    raw = spot_candidates([Segment("s1", text)], WEB.entries(), min_similarity=0.5, max_tokens=4)
    # compared as said ("yet dot com" against "YETI dot com"), not as written ("yetdotcom" against "yeticom": 0.67)
    said = {c.original for c in raw if c.final in ("YETI.com", ".revgroup.com") and c.signals["edit"] >= 0.85}
    assert said == expected


def test_a_web_address_written_as_listed_is_left_alone() -> None:
    seg = Segment("s1", "go to YETI.com or www.sec.gov for U.S. filings")
    kept, _ = run_stages(PipelineInputs([seg], WEB), Settings())
    assert kept == []


def test_a_window_one_word_short_never_proposes_repeating_its_misheard_neighbour() -> None:
    entries = CanonicalDictionary({"orgs": ["Beckman Coulter"]}).entries()
    inputs = PipelineInputs(
        [Segment("s1", "and Backman Coulter too")], CanonicalDictionary({"orgs": ["Beckman Coulter"]})
    )
    spotted = spot_candidates(inputs.segments, entries, min_similarity=0.5, max_tokens=4)
    flagged = [c for c in spotted if c.repeats_neighbour]
    assert [(c.original, c.final) for c in flagged] == [("Coulter", "Beckman Coulter")]  # still scored, flagged
    kept, _ = run_stages(inputs, Settings())
    assert ("Backman", "Beckman") in _pairs(kept)
    assert not [c for c in kept if c.original == "Coulter"]  # never "Backman Beckman Coulter"
    alone = spot_candidates([Segment("s1", "and Coulter too")], entries, min_similarity=0.5, max_tokens=4)
    assert [c.repeats_neighbour for c in alone if c.original == "Coulter"] == [False]  # said alone, still a guess


@pytest.mark.parametrize(
    ("original", "final", "expected"),
    [
        ("comp", "CMP", True),  # "workers comp": said as a word, never letters
        ("Comp", "CMP", True),
        ("over", "3VR", True),  # a number beside the letters changes nothing
        ("cash", "CVS's", True),
        ("fpl", "FPL", False),  # no vowel: the recogniser wrote the letters it heard
        ("tne", "TNT", False),  # not a word in use: a mis-hearing of the letters
        ("comp", "NASA", False),  # an acronym with vowels may be said as a word
        ("workers comp", "CMP", False),  # one word only
        ("COMP", "CMP", False),  # already capitals
        ("comp", "C", False),  # a single letter is not an acronym
    ],
)
def test_an_everyday_word_never_becomes_letters_nobody_says_as_a_word(
    original: str, final: str, expected: bool
) -> None:
    assert word_for_letters(original, final) is expected


def test_a_word_made_letters_is_spotted_flagged_and_never_proposed_unless_the_user_taught_it() -> None:
    listed = CanonicalDictionary({"acronyms": ["CMP"], "orgs": ["Cytiva"]})
    segs = [Segment("1", "workers comp claims rose at Cytova")]
    spotted = spot_candidates(segs, listed.entries(), min_similarity=0.7, max_tokens=4)
    assert [(c.original, c.final) for c in spotted if c.word_for_letters] == [("comp", "CMP")]  # scored, flagged
    kept, _ = run_stages(PipelineInputs(segs, listed), Settings())
    assert _pairs(kept) == {("Cytova", "Cytiva")}
    taught = [RememberedCorrection("comp", "CMP", "ACRONYM", context="workers comp claims rose", frequency=3)]
    kept, _ = run_stages(PipelineInputs(segs, listed, remembered=taught), Settings())
    assert ("comp", "CMP") in _pairs(kept)  # the user's own word for it: their memory decides


def test_where_the_spotters_own_final_applies_its_confidence_is_its_own_evidence() -> None:
    """The memory's bonus backed the final it swapped in; once the spotter's final is back, the page shows what the
    signals alone said of it."""
    strong = {"edit": 0.9, "rag": 0.9, "phonetic": 1.0, "frequency": 1.0, "length": 1.0, "capitalised": 1.0}
    alone = Candidate("s", 0, 4, "yeti", "YETI", "ORG", "rag", signals=dict(strong))
    score_candidates([alone], W)
    swapped = Candidate("s", 0, 4, "yeti", "YETI", "ORG", "rag", signals=dict(strong), memory_bonus=0.3)
    take_remembered_final(swapped, "YETI's")
    score_candidates([swapped], W)
    assert alone.disposition is Disposition.AUTO_APPLIED and alone.confidence < 1.0
    assert (swapped.final, swapped.disposition) == ("YETI", Disposition.AUTO_APPLIED)
    assert swapped.confidence == alone.confidence


def test_a_window_index_asked_without_grouping_gathers_every_text_once_and_answers_the_same() -> None:
    from namesake.reliability.windows import windows_of

    segs = [Segment("s1", "the cement os argos team met cement os people"), Segment("s2", "argos again")]
    grouped, asked = windows_of(segs, max_tokens=3), windows_of(segs, max_tokens=3)
    grouped.group(["argos", "cementos"])
    assert asked.windows("argos") == grouped.windows("argos") and len(asked.windows("argos")) == 2
    assert asked.windows("cementos") == grouped.windows("cementos") and len(asked.windows("cementos")) == 2
    assert set(asked._groups) == set(asked.keys)  # the first ungrouped question gathered every text
    assert asked.windows("not-in-the-text") == []
