"""Form fixes (a canonical value written in another form) and the context signals."""

from __future__ import annotations

from pathlib import Path

import pytest

from namesake.core.settings import Settings
from namesake.core.text import changes_text, form_differs, written_form
from namesake.domain.types import CanonicalDictionary, Segment
from namesake.reliability import context
from namesake.reliability.context import count_phrases, counts_file, keep_counts_in, phrase_logp, word_pairs
from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals

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


def test_phrases_sharing_a_first_word_are_counted_each_at_its_own_length() -> None:
    segs = [Segment("1", "the cup fell and the cup fell again"), Segment("2", "the cup fell")]
    phrases = {("cup",), ("cup", "fell"), ("cup", "fell", "again"), ("the", "cup", "fell", "again", "today")}
    counts = count_phrases(segs, phrases)
    assert counts[("cup",)] == 3 and counts[("cup", "fell")] == 3 and counts[("cup", "fell", "again")] == 1
    # cut short by the segment's end, "cup fell" is not "cup fell again", nor a longer phrase a shorter one
    assert counts[("the", "cup", "fell", "again", "today")] == 0 and sum(counts.values()) == 7


def test_a_candidate_knows_how_often_its_change_recurs_and_how_contested_its_span_is() -> None:
    from namesake.domain.types import Candidate
    from namesake.reliability.score import fill_context_signals

    cands = [
        Candidate("1", 0, 4, "bodes", "Biden's", "PERSON", "rag"),
        Candidate("1", 0, 4, "bodes", "Bodes", "ORG", "rag"),
        Candidate("2", 9, 13, "Bodes", "Biden's", "PERSON", "rag"),  # the same change in another case
    ]
    fill_context_signals(cands)
    assert [c.signals["pair_repeats"] for c in cands] == [1.0986, 0.6931, 1.0986]  # log1p(2), log1p(1)
    assert [c.signals["span_alternatives"] for c in cands] == [0.6931, 0.6931, 0.0]  # log(2), log(1)


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


def test_the_pair_counts_are_kept_between_processes_and_a_damaged_cache_file_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(context, "_COUNTS_DIR", {})
    keep_counts_in(tmp_path)
    word_pairs.cache_clear()
    try:
        parsed = word_pairs("en")
        assert parsed is not None and counts_file(tmp_path).exists()
        with monkeypatch.context() as m:
            m.setattr(context, "_read_counts", lambda name: pytest.fail(f"{name} parsed again"))
            word_pairs.cache_clear()
            kept = word_pairs("en")  # as the next process reads them: from the file
        assert kept is not None and kept.unigrams == parsed.unigrams and kept.bigrams == parsed.bigrams
        counts_file(tmp_path).write_bytes(b"\x00 not marshal")
        word_pairs.cache_clear()
        again = word_pairs("en")
        assert again is not None and again.bigrams == parsed.bigrams
    finally:
        word_pairs.cache_clear()
