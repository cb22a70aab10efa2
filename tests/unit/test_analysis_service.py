"""The analysis service's rules on in-memory stores: what it reads, saves, renews and takes back, around the real
stages."""

from __future__ import annotations

import threading

import pytest

from namesake.analysis.inputs import TranscriptIn
from namesake.analysis.service import AnalysisService
from namesake.core.cancel import CancelledWork, cancellable
from namesake.core.errors import InputTooLargeError
from namesake.core.settings import Settings
from namesake.domain.types import RememberedCorrection, SuggestionStatus
from tests.fakes.analysis import FakeAnalysisStores

TEXT = "Turning to extra energy partners, liquidity was strong."
LISTS = {"orgs": ["NextEra Energy Partners"]}


def _service(stores: FakeAnalysisStores, **settings: object) -> AnalysisService:
    return AnalysisService(Settings(reliability_language_model="none", **settings), stores)  # type: ignore[arg-type]


def _call(tid: str = "t1", lists: dict[str, list[str]] | None = None) -> TranscriptIn:
    return TranscriptIn.model_validate(
        {"transcript_id": tid, "user_id": "ana", "segments": [{"id": "1", "text": TEXT}], "canonical_entities": lists}
    )


def test_a_list_sent_once_is_read_from_the_store_the_next_time() -> None:
    stores = FakeAnalysisStores()
    first = _service(stores).analyze(_call(lists=LISTS))
    assert [(s.original, s.final) for s in first.suggestions][:1] == [("extra", "NextEra")]
    assert stores.owners == {"t1": "ana"} and stores.lists["t1"] == LISTS
    again = _service(stores).analyze(_call())  # no list in the request: the stored one
    assert [s.final for s in again.suggestions] == [s.final for s in first.suggestions]
    assert stores.saved["t1"] == again.suggestions


def test_a_fix_the_memory_applied_by_itself_is_renewed_for_its_user() -> None:
    stores = FakeAnalysisStores(remembered={"ana": [RememberedCorrection("liquidity", "Liquidity", "KEYWORD",
                                                                        frequency=5)]})  # fmt: skip
    result = _service(stores).analyze(_call())
    applied = [s for s in result.suggestions if s.original == "liquidity"]
    assert [s.status for s in applied] == [SuggestionStatus.AUTO_APPLIED]
    assert stores.renewed == [("ana", "liquidity", "Liquidity")]


def test_a_list_over_the_budget_is_refused_and_nothing_is_registered() -> None:
    stores = FakeAnalysisStores()
    with pytest.raises(InputTooLargeError, match="MAX_ANALYSIS_PAIRS"):
        _service(stores, max_analysis_pairs=10).analyze(_call(lists=LISTS))
    assert stores.owners == {} and stores.saved == {}


def test_an_analysis_stopped_midway_takes_away_only_a_transcript_it_registered() -> None:
    stores, gone = FakeAnalysisStores(), threading.Event()
    gone.set()
    with cancellable(gone), pytest.raises(CancelledWork):
        _service(stores).analyze(_call(lists=LISTS))
    assert stores.discarded == ["t1"] and stores.owners == {} and stores.saved == {}
    _service(stores).analyze(_call(lists=LISTS))  # registered now: a stopped re-analysis leaves it
    with cancellable(gone), pytest.raises(CancelledWork):
        _service(stores).analyze(_call())
    assert stores.discarded == ["t1"] and "t1" in stores.owners and stores.saved["t1"]
