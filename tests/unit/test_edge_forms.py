"""The words a right rewrite leaves as heard, written as its entry writes them (reliability/edge_forms.py)."""

from __future__ import annotations

from namesake.core.settings import Settings
from namesake.domain.types import CanonicalDictionary, Disposition, RememberedCorrection, Segment
from namesake.reliability.edge_forms import EDGE_FORM, edge_pieces
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.refusal_policy import refusal_key
from namesake.review.explain import MEASURED, REASONS

TEXT = "Turning to extra energy partners, liquidity was strong."


def test_the_trimmed_words_of_an_entry_are_written_as_it_writes_them_punctuation_kept() -> None:
    start = TEXT.index("extra")
    pieces = edge_pieces(TEXT, start, start + 5, "NextEra", "NextEra Energy Partners")
    assert [(TEXT[a:b], written) for a, b, written in pieces] == [("energy", "Energy"), ("partners", "Partners")]
    assert TEXT[pieces[-1][1]] == ","  # the comma stays outside the edit


def test_nothing_where_the_entry_is_the_final_the_words_differ_or_are_already_written_so() -> None:
    start = TEXT.index("extra")
    assert edge_pieces(TEXT, start, start + 5, "NextEra", "NextEra") == []
    assert edge_pieces(TEXT, start, start + 5, "NextEra", None) == []
    assert edge_pieces(TEXT, start, start + 5, "NextEra", "NextEra Power Partners") == []  # "energy" is not Power
    written = "Turning to extra Energy, liquidity was strong."
    assert edge_pieces(written, start, start + 5, "NextEra", "NextEra Energy") == []
    assert edge_pieces(TEXT, start, start + 5, "NextEra", "Florida NextEra Energy") == []  # no "Florida" before it


def _kept(on: bool, refused: dict[tuple[str, str], int] | None = None) -> list[tuple[str, str, Disposition, float]]:
    segments = [Segment("1", TEXT), Segment("2", "Revenue grew at ford motor, said the CFO.")]
    lists = CanonicalDictionary({"orgs": ["NextEra Energy Partners"]})
    settings = Settings(reliability_language_model="none", reliability_edge_forms=on)
    kept, _ = run_stages(PipelineInputs(segments, lists, refused=refused or {}), settings)
    return [(c.original, c.final, c.disposition, c.confidence) for c in kept]


def test_an_applied_rewrite_brings_its_edge_words_as_edits_of_their_own_with_its_decision() -> None:
    with_forms, without = _kept(True), _kept(False)
    assert without == [("extra", "NextEra", Disposition.AUTO_APPLIED, without[0][3])]
    confidence = without[0][3]
    assert with_forms == [
        ("extra", "NextEra", Disposition.AUTO_APPLIED, confidence),
        ("energy", "Energy", Disposition.AUTO_APPLIED, confidence),
        ("partners", "Partners", Disposition.AUTO_APPLIED, confidence),
    ]


def test_an_edge_word_the_user_refused_stays_as_heard() -> None:
    kept = _kept(True, refused={refusal_key("energy", "Energy"): 1})
    assert [(o, f) for o, f, _, _ in kept] == [("extra", "NextEra"), ("partners", "Partners")]


def test_an_edge_word_refused_as_often_as_made_waits_for_a_reviewer() -> None:
    made = [RememberedCorrection("energy", "Energy", "ORG")]
    segments = [Segment("1", TEXT)]
    lists = CanonicalDictionary({"orgs": ["NextEra Energy Partners"]})
    inputs = PipelineInputs(segments, lists, refused={refusal_key("energy", "Energy"): 1}, remembered=made)
    kept, _ = run_stages(inputs, Settings(reliability_language_model="none"))
    decided = {c.original: c for c in kept}
    assert decided["energy"].refused_as_often and decided["energy"].disposition is Disposition.PENDING
    assert decided["partners"].disposition is Disposition.AUTO_APPLIED and not decided["partners"].contested


def test_the_page_says_why_an_edge_word_changed_without_a_number() -> None:
    assert EDGE_FORM in REASONS and EDGE_FORM not in MEASURED
