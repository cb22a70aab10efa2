"""Why the reviewer lost a right fix nobody taught: the kinds `bench.measure.untaught_lost` counts."""

from __future__ import annotations

from typing import Any

import pytest
from bench.measure.untaught_lost import kind_of, unsuggested_kind


def _s(source: str = "rag", **signals: float) -> dict[str, Any]:
    return {"original": "kanako", "final": "Conoco", "source": source, "signals": signals}


@pytest.mark.parametrize(
    ("mem", "kind"),
    [
        ([], "nothing proposed"),
        ([_s(contested=1.0)], "contested"),
        ([_s("memory", remembered=1.0, remembered_frequency=4.0), _s()], "a taught pair wins the span"),
        ([_s("memory", memory_score=0.85)], "a final swapped in from a near original"),
        ([_s()], "another reading wins the span"),
    ],
)
def test_a_loss_is_named_by_what_stood_over_its_words_for_the_reviewer(mem: list[dict[str, Any]], kind: str) -> None:
    assert kind_of(mem) == kind


@pytest.mark.parametrize(
    ("mem", "right_there", "kind"),
    [
        ([], False, "nothing proposed"),
        ([_s("memory", remembered=1.0), _s()], True, "a right suggestion undone by another on the same name"),
        ([_s("memory", remembered=1.0)], False, "the memory's pair, another final or span"),
        ([_s()], False, "the list's other reading"),
    ],
)
def test_a_taught_repeat_nothing_made_right_is_named_by_what_stood_over_it(
    mem: list[dict[str, Any]], right_there: bool, kind: str
) -> None:
    assert unsuggested_kind(mem, right_there) == kind
