"""A first run's notice names where it writes as the user reads their home: ~."""

from __future__ import annotations

from pathlib import Path

from namesake.core.paths import shown


def test_a_notice_path_is_written_from_home() -> None:
    assert shown(Path.home() / ".cache" / "namesake" / "encoder") == "~/.cache/namesake/encoder"
    assert shown("/srv/cache/lm") == "/srv/cache/lm"


def test_every_first_run_notice_fits_a_terminal_line() -> None:
    """The notices name the cache folder that holds what they write (~/.cache/namesake/language-model), not its
    hashed name: each within 100 columns for a user whose cache is in their home."""
    import re

    root = Path(__file__).resolve().parents[2] / "src" / "namesake"
    longest = {"language-model": "~/.cache/namesake/language-model", "encoder": "~/.cache/namesake/encoder"}
    for source in root.rglob("*.py"):
        for notice in re.findall(r'"(first run: [^"]+)"', source.read_text(encoding="utf-8")):
            line = notice.replace("%.0f", "150").replace("%s", max(longest.values(), key=len))
            assert len(line) <= 100, (source.name, line)
