"""The schema on real PostgreSQL: constraints the design relies on are enforced by the database."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, inspect, select, text
from sqlalchemy.exc import IntegrityError

from namesake.adapters.db import (
    SCHEMA_HEAD,
    Database,
    current_revision,
    downgrade,
    open_database,
    revisions,
    sqlalchemy_url,
    upgrade,
)
from namesake.adapters.models import CanonicalVocabulary, CorrectionMirror, SuggestionRow, Transcript, User
from namesake.core.errors import ConflictError
from namesake.core.settings import Settings
from tests.conftest import _scratch_database


def _correction(user: str, original_norm: str, status: str = "active") -> CorrectionMirror:
    return CorrectionMirror(
        qdrant_point_id=uuid.uuid4(),
        user_id=user,
        entity_type="PERSON",
        original="Mitnou",
        original_norm=original_norm,
        final="MeetNoo",
        final_norm="meetnoo",
        action="accept",
        quarantine_until=datetime.now(UTC) + timedelta(days=30),
        status=status,
        embedding_model="use",
        embedding_model_version="1",
    )


def _suggestion(transcript_id: str) -> SuggestionRow:
    return SuggestionRow(
        transcript_id=transcript_id, segment_id="1", start_char=0, end_char=3, original="abc", final="ABC",
        entity_type="ACRONYM", confidence=0.9, status="pending", source="rag",
    )  # fmt: skip


def test_second_active_correction_for_same_original_is_rejected(db: Database) -> None:
    with db.session() as s:
        s.add(User(id="u1"))
        s.flush()
        s.add(_correction("u1", "mitnou"))
    with pytest.raises(ConflictError) as err, db.session() as s:
        s.add(_correction("u1", "mitnou"))
    assert isinstance(err.value.__cause__, IntegrityError)  # the constraint, translated once by the session
    with db.session() as s:  # superseded rows may pile up beside the active one
        s.add(_correction("u1", "mitnou", status="superseded"))
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(CorrectionMirror)) == 2


def test_deleting_a_user_cascades_to_everything_they_own(db: Database) -> None:
    with db.session() as s:
        s.add_all([User(id="gone"), User(id="kept")])
        s.flush()
        s.add_all([Transcript(id="t1", user_id="gone"), Transcript(id="t2", user_id="kept")])
        s.flush()
        s.add(_suggestion("t1"))
        s.add_all([_correction("gone", "a"), _correction("kept", "a")])
        s.add(CanonicalVocabulary(scope="user", user_id="gone", entity_type="PERSON", value="X", value_norm="x"))
    with db.session() as s:
        s.execute(text("DELETE FROM users WHERE id = 'gone'"))
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Transcript)) == 1
        assert s.scalar(select(func.count()).select_from(SuggestionRow)) == 0
        assert s.scalars(select(CorrectionMirror.user_id)).all() == ["kept"]
        assert s.scalar(select(func.count()).select_from(CanonicalVocabulary)) == 0


def test_re_analysing_cannot_duplicate_a_suggestion(db: Database) -> None:
    with db.session() as s:
        s.add(User(id="u"))
        s.flush()
        s.add(Transcript(id="t", user_id="u"))
    with db.session() as s:
        s.add(_suggestion("t"))
    with pytest.raises(ConflictError) as err, db.session() as s:
        s.add(_suggestion("t"))
    assert isinstance(err.value.__cause__, IntegrityError)


def test_json_columns_keep_numpy_numbers_and_accents_as_the_standard_library_would(db: Database) -> None:
    import json

    import numpy as np

    segments = [{"id": "1", "text": "Göttingen — Nestlé", "gain": np.float64(0.1) + np.float64(0.2), "n": np.int64(3)}]
    with db.session() as s:
        s.add(User(id="u"))
        s.flush()
        s.add(Transcript(id="t", user_id="u", segments=segments))
    with db.session() as s:
        stored = s.scalar(select(Transcript.segments).where(Transcript.id == "t"))
    assert stored == json.loads(json.dumps(segments, default=int))  # 0.30000000000000004 and the accents, unchanged
    with db.session() as s:
        assert s.scalar(text("SELECT segments->0->>'text' FROM transcripts WHERE id = 't'")) == "Göttingen — Nestlé"


def test_upgrade_downgrade_upgrade_on_an_empty_database(pg_server_url: str) -> None:
    url, name = _scratch_database(pg_server_url)
    try:
        upgrade(url)
        engine = create_engine(sqlalchemy_url(url))
        tables = set(inspect(engine).get_table_names())
        assert {
            "users",
            "transcripts",
            "suggestions",
            "correction_mirror",
            "canonical_vocabulary",
            "job_runs",
        } <= tables
        downgrade(url, "base")
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        upgrade(url)
        assert "correction_mirror" in set(inspect(engine).get_table_names())
        engine.dispose()
    finally:
        admin = create_engine(sqlalchemy_url(pg_server_url), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_the_schema_head_constant_is_the_last_migration() -> None:
    assert revisions()[-1] == SCHEMA_HEAD  # a new migration moves SCHEMA_HEAD with it


def test_a_database_behind_head_is_migrated_when_opened_and_one_at_head_opens_without_alembic(
    pg_server_url: str, tmp_path: Path
) -> None:
    url, name = _scratch_database(pg_server_url)
    try:
        upgrade(url, revisions()[-2])
        assert current_revision(url) == revisions()[-2]
        open_database(Settings(database_url=url, namesake_data_dir=tmp_path)).close()
        assert current_revision(url) == SCHEMA_HEAD
        opened = subprocess.run(
            [sys.executable, "-c", OPEN_AND_SAY_IF_ALEMBIC_LOADED], env={**os.environ, "DATABASE_URL": url,
            "NAMESAKE_DATA_DIR": str(tmp_path)}, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert opened.stdout.split() == ["alembic:", "False"]
    finally:
        admin = create_engine(sqlalchemy_url(pg_server_url), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


OPEN_AND_SAY_IF_ALEMBIC_LOADED = (
    "import sys; from namesake.adapters.db import open_database; from namesake.core.settings import Settings; "
    "open_database(Settings()).close(); print('alembic:', any(m.startswith('alembic') for m in sys.modules))"
)


def test_models_match_the_migration(db: Database) -> None:
    """Autogenerate against head finds nothing to do: models and revisions agree."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from namesake.adapters.models import Base

    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
