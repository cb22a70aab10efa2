"""An analysis under way while its user is erased or its transcript deleted: it ends as the docs say, saving nothing."""

from __future__ import annotations

import pytest

from namesake.adapters.runtime import Runtime
from namesake.core.errors import GoneError, NotFoundError
from namesake.jobs import tasks
from namesake.reliability.inputs import TranscriptIn
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
    receipt = tasks.erase_user(runtime, "leaving")  # the erasure answers while the analysis is under way
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
