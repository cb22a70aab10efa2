"""The rules `bench.measure.loop_rescore` reads a kept loop run with: what each holds back or lets through."""

from __future__ import annotations

from typing import Any

import pytest
from bench.measure.loop_rescore import by_hand_every_time, confirmed_floor, taught_by_accepting

from namesake.reliability.memory_policy import EVERY_TIME_GAIN


def _s(status: str, confidence: float, original: str = "line", **signals: float) -> dict[str, Any]:
    return {"original": original, "final": "Ryan", "status": status, "confidence": confidence, "signals": signals}


@pytest.mark.parametrize(
    ("s", "status"),
    [
        (_s("auto_applied", 0.32, name_confirmed=1.0), "pending"),  # the list's reading of a confirmed name, below
        (_s("auto_applied", 0.35, name_confirmed=1.0), "auto_applied"),  # ... from the floor
        (_s("auto_applied", 0.32, name_confirmed=1.0, remembered=1.0), "auto_applied"),  # the user's own pair
        (_s("auto_applied", 0.32), "auto_applied"),  # no confirmed name
    ],
)
def test_a_confirmed_floor_holds_back_only_the_lists_readings_of_a_confirmed_name_below_it(
    s: dict[str, Any], status: str
) -> None:
    assert confirmed_floor(0.35)(s)["status"] == status


_HAND = {"remembered": 1.0, "remembered_manual": 1.0, "remembered_frequency": 1.0, "remembered_everyday": 5.2}


@pytest.mark.parametrize(
    ("s", "status"),
    [
        (_s("pending", 0.3, remembered_left_alone=0.0, lm_gain=EVERY_TIME_GAIN, **_HAND), "auto_applied"),
        (_s("pending", 0.3, remembered_left_alone=0.0, lm_gain=EVERY_TIME_GAIN - 1, **_HAND), "pending"),
        (_s("pending", 0.3, remembered_left_alone=2.0, lm_gain=0.0, **_HAND), "pending"),  # kept as said there
        (_s("pending", 0.3, remembered_left_alone=0.0, lm_gain=0.0, contested=1.0, **_HAND), "pending"),
        (_s("pending", 0.3, "us", remembered_left_alone=0.0, lm_gain=0.0, **{**_HAND, "remembered_everyday": 6.0}),
         "pending"),  # as common as a function word
    ],
)  # fmt: skip
def test_a_hand_fix_made_every_time_is_let_through_from_the_gain_given(s: dict[str, Any], status: str) -> None:
    assert by_hand_every_time(EVERY_TIME_GAIN)(s)["status"] == status


class _Norm:
    @staticmethod
    def norm(text: str) -> str:
        return text.casefold()


def test_a_pair_counts_as_accepted_only_where_an_accepted_suggestion_covered_one_of_its_first_half_errors() -> None:
    call = {"segments": [
        {"id": "1", "errors": [{"hyp_span": "line", "ref_span": "Ryan", "start": 4, "end": 8}]},
        {"id": "2", "errors": []},
    ]}  # fmt: skip
    error = {"hyp_span": "Line", "ref_span": "Ryan"}
    assert taught_by_accepting(_Norm(), call, error, [("1", 0, 6)])
    assert not taught_by_accepting(_Norm(), call, error, [("1", 8, 12)])  # beside it: fixed by hand
    assert not taught_by_accepting(_Norm(), call, error, [("2", 0, 6)])
