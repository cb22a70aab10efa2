"""Golden tables for the memory's pure logic: the boost formula and the write decision."""

from __future__ import annotations

import math

import pytest

from namesake.corrections_memory.decision import Existing, SemanticHit, WriteOutcome, decide_write
from namesake.corrections_memory.scope import memory_filter
from namesake.errors import InvalidInputError
from namesake.reliability.memory_policy import BoostParams, boost_for
from namesake.vectors.base import Match

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
        ("s2", "meetnoo sas", E, None, WriteOutcome.SUPERSEDED, 1),
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
    d = decide_write(suggestion_id=sid, final_norm=final, same_original=same, semantic=semantic, dedupe_threshold=0.95)
    assert (d.outcome, d.target_row_id) == (outcome, target)


def test_every_memory_filter_carries_the_user() -> None:
    flt = memory_filter("alice", entity_type="PERSON", exclude_promoted=True, quarantine_after=5)
    assert Match("user_id", "alice") in flt.must
    with pytest.raises(InvalidInputError):
        memory_filter("")
