"""`namesake analyze` on what ASR engines write: recognised by shape (or named), applied in the engine's own shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from namesake.adapters.db import Database
from namesake.analysis.engines import Engine, segments
from namesake.cli import app
from namesake.core.settings import Settings

DATA = Path(__file__).resolve().parents[1] / "data" / "engines"
ENGINES = [Engine.WHISPER, Engine.DEEPGRAM, Engine.ASSEMBLYAI, Engine.SPEECHMATICS, Engine.GLADIA]


@pytest.fixture
def env(settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", str(settings.database_url))
    monkeypatch.setenv("NAMESAKE_DATA_DIR", str(settings.namesake_data_dir))


def _call(engine: Engine, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    doc = json.loads((DATA / f"{engine.value}.json").read_text())
    given = {**doc, "user_id": "ana", "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]}}
    path = tmp_path / f"{engine.value}-call.json"
    path.write_text(json.dumps(given))
    return path, given


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize("engine", ENGINES)
def test_an_engines_json_is_analysed_and_applied_in_its_own_shape_with_its_times(
    engine: Engine, tmp_path: Path
) -> None:
    path, given = _call(engine, tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    applied = json.loads(result.stdout)
    first = segments(applied, engine)[0]
    assert first.text == "Thanks to Rainer Blair and the Cytiva team."
    assert "Cytova" not in json.dumps(applied)
    assert (first.start, first.end) == (segments(given, engine)[0].start, segments(given, engine)[0].end)
    assert applied.keys() == given.keys()  # the engine's document, not namesake's shape
    named = CliRunner().invoke(app, ["analyze", str(path), "--from", engine.value])
    assert named.exit_code == 0 and json.loads(named.stdout)["suggestions"]


@pytest.mark.usefixtures("env")
def test_an_engines_json_named_as_another_is_exit_2_naming_it(tmp_path: Path) -> None:
    path, _ = _call(Engine.WHISPER, tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(path), "--from", "gladia"])
    assert result.exit_code == 2 and "not gladia JSON" in result.stderr
