"""Form fixes (a canonical value written in another form) and the context signals."""

from __future__ import annotations

from namesake.reliability.context import count_phrases, phrase_logp, word_pairs
from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals
from namesake.reliability.types import CanonicalDictionary, Segment
from namesake.settings import Settings
from namesake.text import changes_text, form_differs, written_form

FORMS = CanonicalDictionary({"orgs": ["Tallgrass", "Datadog"], "acronyms": ["EBITDA", "KPI"], "places": ["Göttingen"],
                             "keywords": ["revenue"]})  # fmt: skip


def _cands(text: str, d: CanonicalDictionary = FORMS) -> dict[str, str]:
    return {
        c.original: c.final for c in candidate_signals(PipelineInputs([Segment("1", text)], d), Settings(), RunStats())
    }


def test_a_canonical_value_in_another_form_is_proposed_in_its_canonical_spelling() -> None:
    found = _cands("tall grass and data dog met in Gottingen on ebitda and the K P I")
    assert found["tall grass"] == "Tallgrass" and found["data dog"] == "Datadog"
    assert found["Gottingen"] == "Göttingen" and found["ebitda"] == "EBITDA" and found["K P I"] == "KPI"


def test_what_is_written_right_or_only_differs_in_meaningless_case_gets_nothing() -> None:
    assert _cands("Tallgrass grew its EBITDA and revenue") == {}
    assert _cands("Revenue grew") == {}  # the canonical value is lowercase: its case carries no meaning


def test_form_comparison_follows_the_yardstick() -> None:
    assert written_form("tall-grass's") == ("tall", "grasss")
    assert form_differs("ebitda", "EBITDA") and not form_differs("Revenue", "revenue")
    assert changes_text("Data Dog", "Datadog") and not changes_text("U.S.", "US")


def test_the_transcript_counts_a_final_only_where_it_is_written_so() -> None:
    segs = [Segment("1", "Cup rose, the cup fell"), Segment("2", "Cup again")]
    counts = count_phrases(segs, {written_form(p) for p in ("Cup", "cup", "Cup rose", "fell Cup")})
    assert counts[("Cup",)] == 2 and counts[("cup",)] == 1 and counts[("Cup", "rose")] == 1
    assert counts[("fell", "Cup")] == 0  # a phrase never runs across segments


def test_english_word_pairs_prefer_the_everyday_reading_in_its_context() -> None:
    lm = word_pairs("en")
    assert lm is not None and word_pairs("fr") is None  # no French pair counts are installed
    assert phrase_logp(lm, "which", ["bodes"], "well") > phrase_logp(lm, "which", ["bidens"], "well")
    signals = {c.final: c.signals for c in candidate_signals(
        PipelineInputs([Segment("1", "which bodes well")], CanonicalDictionary({"persons": ["Biden's"]})),
        Settings(), RunStats())}  # fmt: skip
    assert signals["Biden's"]["ctx_gain"] < 0


def test_an_occurrence_knows_how_its_pair_reads_across_the_call() -> None:
    from namesake.reliability.reading import pair_means

    pairs = [("teams", "Teams"), ("TEAMS", "Teams"), ("comp", "CMP"), ("teams", "Teams"), ("teams", "TEAMS")]
    gains = [-4.0, 2.0, -10.0, -1.0, 5.0]
    # heard in any case, the same final: one pair; another final is another pair
    assert pair_means(pairs, gains) == [(-1.0, 3), (-1.0, 3), (-10.0, 1), (-1.0, 3), (5.0, 1)]
