"""The jobs as operators run them from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from namesake.adapters.db import Database
from namesake.cli import app
from namesake.core.settings import Settings


@pytest.fixture
def env(settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", str(settings.database_url))
    monkeypatch.setenv("NAMESAKE_DATA_DIR", str(settings.namesake_data_dir))


def test_promote_reconcile_and_erase_from_the_cli(env: None, tmp_path: Path, db: Database) -> None:
    transcript = {
        "transcript_id": "cli-jobs",
        "user_id": "carol",
        "segments": [{"id": "1", "text": "Reiner spoke."}],
        "canonical_entities": {"persons": ["Rainer"]},
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(transcript))
    assert CliRunner().invoke(app, ["analyze", str(path)]).exit_code == 0
    for args in (["jobs", "promote"], ["jobs", "reconcile"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "run " in result.stdout
    result = CliRunner().invoke(app, ["jobs", "promote", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["job"] == "promotion" and summary["run_id"] > 0 and summary["counts"]["promoted"] == 0
    exported = CliRunner().invoke(app, ["vocab", "export", "--user", "carol", "--format", "deepgram",
                                        "--transcript", "cli-jobs"])  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)["keyterm"] == ["Rainer"]  # the transcript's list; carol taught nothing yet
    bad = CliRunner().invoke(app, ["vocab", "export", "--user", "carol", "--format", "siri"])
    assert bad.exit_code == 2
    result = CliRunner().invoke(app, ["users", "erase", "carol"])
    assert result.exit_code == 0, result.output
    receipt = json.loads(result.stdout)
    assert receipt["remaining"] == {"qdrant_points": 0, "rows": 0} and receipt["deleted"]["collections"] == 1
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM job_runs WHERE status = 'succeeded'").scalar() == 3
        assert conn.exec_driver_sql("SELECT count(*) FROM transcripts").scalar() == 0


def test_the_retention_job_from_the_cli(env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"transcript_id": "kept", "segments": [{"id": "1", "text": "Reiner spoke."}]}))
    assert CliRunner().invoke(app, ["analyze", str(path)]).exit_code == 0
    result = CliRunner().invoke(app, ["jobs", "retention", "--json"])  # no retention set: nothing expires
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"] == {"expired": 0}
    monkeypatch.setenv("TRANSCRIPT_RETENTION_DAYS", "0")
    result = CliRunner().invoke(app, ["jobs", "retention", "--json"])
    assert result.exit_code == 2 and "TRANSCRIPT_RETENTION_DAYS" in result.output  # 0 is not a number of days
