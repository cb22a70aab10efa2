"""`namesake cache`: what the user cache holds, and clearing it (every run rebuilds what it needs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from namesake.cli import app


def test_the_cache_says_what_it_holds_and_clearing_it_frees_that(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    weights = cache / "language-model" / "SmolLM2-135M-Instruct.Q4_1-1-2"
    weights.mkdir(parents=True)
    (weights / "layers.f32").write_bytes(b"\0" * 2_000_000)
    (cache / "language-model" / "precision-abc.json").write_text('{"f32": 0.5}')
    monkeypatch.setenv("NAMESAKE_CACHE_DIR", str(cache))
    info = CliRunner().invoke(app, ["cache", "info"])
    assert info.exit_code == 0 and info.stdout.splitlines()[0] == f"{cache}: 2 MB"
    assert "language-model/SmolLM2-135M-Instruct.Q4_1-1-2" in info.stdout
    listed = json.loads(CliRunner().invoke(app, ["cache", "info", "--json"]).stdout)
    assert listed["bytes"] == 2_000_000 + len('{"f32": 0.5}') and len(listed["entries"]) == 2
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "2 MB freed" in cleared.stdout
    assert list(cache.iterdir()) == []
    assert json.loads(CliRunner().invoke(app, ["cache", "info", "--json"]).stdout)["entries"] == []
