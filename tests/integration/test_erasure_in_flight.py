"""An analysis under way while its user is erased or its transcript deleted: it ends as the docs say, saving nothing."""

from __future__ import annotations

import pytest

from namesake.adapters.runtime import Runtime
from namesake.analysis.inputs import TranscriptIn
from namesake.core.errors import GoneError, NotFoundError
from namesake.jobs import Jobs, RuntimeJobWork
from namesake.transcripts.retention import delete_transcript
from tests.conftest import analysis_service

CALL = {
    "transcript_id": "in-flight",
    "user_id": "leaving",
    "segments": [{"id": "1", "text": "Thanks to Reiner Blair and the Cytova team."}],
    "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]},
}


def _rows(rt: Runtime) -> tuple[int, int]:
    with rt.db.engine.connect() as conn:
        transcripts = conn.exec_driver_sql("SELECT count(*) FROM transcripts").scalar()
        suggestions = conn.exec_driver_sql("SELECT count(*) FROM suggestions").scalar()
    return int(transcripts or 0), int(suggestions or 0)


def test_an_analysis_whose_user_is_erased_meanwhile_ends_410_and_saves_nothing(runtime: Runtime) -> None:
    service = analysis_service(runtime)
    prepared = service.prepare(TranscriptIn.model_validate(CALL))
    kept, stats = service.compute(prepared)
    receipt = Jobs(RuntimeJobWork(runtime)).erase_user("leaving")  # the erasure answers while the analysis is under way
    assert not any(receipt.remaining.values())
    with pytest.raises(GoneError) as caught:
        service.finish(prepared, kept, stats)
    assert caught.value.code == "USER_ERASED"
    assert _rows(runtime) == (0, 0)


def test_an_analysis_whose_transcript_is_deleted_meanwhile_ends_404_and_saves_nothing(runtime: Runtime) -> None:
    service = analysis_service(runtime)
    prepared = service.prepare(TranscriptIn.model_validate(CALL))
    kept, stats = service.compute(prepared)
    delete_transcript(runtime.db, runtime.vectors, runtime.settings, "in-flight")
    with pytest.raises(NotFoundError, match="was deleted while it was being analysed"):
        service.finish(prepared, kept, stats)
    assert _rows(runtime) == (0, 0)


def test_a_decision_on_an_erased_users_suggestion_is_410_and_a_new_transcript_of_that_id_is_another(
    runtime: Runtime,
) -> None:
    from namesake.app.services import build_services
    from namesake.domain.types import ReviewAction

    services = build_services(runtime)
    result = services.analysis.analyze(TranscriptIn.model_validate(CALL))
    suggestion = str(result.suggestions[0].id)
    Jobs(RuntimeJobWork(runtime)).erase_user("leaving")
    for action in (ReviewAction.ACCEPT, ReviewAction.REJECT):
        with pytest.raises(GoneError) as caught:
            services.review.decide(suggestion_id=suggestion, transcript_id="in-flight", action=action)
        assert caught.value.code == "USER_ERASED" and caught.value.field == "transcript_id"
    with pytest.raises(NotFoundError):  # a transcript that never was: 404 as before
        services.review.decide(suggestion_id=suggestion, transcript_id="never-was", action=ReviewAction.REJECT)
    # another user's transcript of the same id, later: its own suggestions, and a stale id is plain 404
    services.analysis.analyze(TranscriptIn.model_validate({**CALL, "user_id": "arriving"}))
    with pytest.raises(NotFoundError):
        services.review.decide(suggestion_id=suggestion, transcript_id="in-flight", action=ReviewAction.REJECT)
