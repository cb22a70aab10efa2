"""A first run's notice names where it writes as the user reads their home: ~."""

from __future__ import annotations

from pathlib import Path

from namesake.core.paths import shown


def test_a_notice_path_is_written_from_home() -> None:
    assert shown(Path.home() / ".cache" / "namesake" / "encoder") == "~/.cache/namesake/encoder"
    assert shown("/srv/cache/lm") == "/srv/cache/lm"
