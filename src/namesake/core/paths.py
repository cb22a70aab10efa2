"""Paths as a person reads them in a one-line notice: the home folder as ~."""

from __future__ import annotations

from pathlib import Path


def shown(path: Path | str) -> str:
    """`path` with the user's home written ~ ("~/.cache/namesake/encoder/…"): a notice a terminal shows whole."""
    p, home = Path(path), Path.home()
    try:
        return f"~/{p.relative_to(home)}"
    except ValueError:
        return str(p)
