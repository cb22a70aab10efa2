"""Deleting a transcript, and the retention job, on real PostgreSQL and the embedded vector store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from namesake.adapters.models import SuggestionRow, Transcript
from namesake.adapters.runtime import Runtime
from namesake.analysis.inputs import TranscriptIn
from namesake.app.services import build_services
from namesake.core.errors import NotFoundError
from namesake.jobs import Jobs, RuntimeJobWork
from namesake.transcripts.canonical_index import collection_for
from namesake.transcripts.retention import delete_transcript, expire_transcripts
from tests.conftest import retuned

ENTITIES = {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]}


def _analyse(rt: Runtime, tid: str) -> None:
    services = build_services(rt)
    body = {"transcript_id": tid, "user_id": "ann", "canonical_entities": ENTITIES,
            "segments": [{"id": "1", "text": "Reiner Blair spoke about Cytova."}]}  # fmt: skip
    services.analysis.analyze(TranscriptIn.model_validate(body))


def test_a_deleted_transcript_leaves_no_row_suggestion_or_collection(runtime: Runtime) -> None:
    _analyse(runtime, "t1")
    _analyse(runtime, "t2")
    receipt = delete_transcript(runtime.db, runtime.vectors, runtime.settings, "t1").as_json()
    assert receipt["deleted"]["collections"] == 1 and receipt["deleted"]["suggestions"] >= 1
    with runtime.db.session() as s:
        assert s.scalar(select(func.count()).where(SuggestionRow.transcript_id == "t1")) == 0
        assert [t for t in s.scalars(select(Transcript.id))] == ["t2"]
    assert not runtime.vectors.collection_exists(collection_for("t1", runtime.settings))
    assert runtime.vectors.collection_exists(collection_for("t2", runtime.settings))
    with pytest.raises(NotFoundError):
        delete_transcript(runtime.db, runtime.vectors, runtime.settings, "t1")


def test_retention_expires_only_transcripts_older_than_the_setting(runtime: Runtime) -> None:
    for tid in ("old", "new"):
        _analyse(runtime, tid)
    with runtime.db.session() as s:
        s.execute(
            update(Transcript).where(Transcript.id == "old").values(analyzed_at=datetime.now(UTC) - timedelta(days=40))
        )
    assert expire_transcripts(runtime.db, runtime.vectors, runtime.settings) == {"expired": 0}  # unset: keep all
    rt = retuned(runtime, transcript_retention_days=30)
    assert Jobs(RuntimeJobWork(rt)).expire_transcripts().counts() == {"expired": 1}
    with runtime.db.session() as s:
        assert list(s.scalars(select(Transcript.id))) == ["new"]
    assert not runtime.vectors.collection_exists(collection_for("old", runtime.settings))
