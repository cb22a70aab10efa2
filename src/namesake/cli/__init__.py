"""The `namesake` command: serve, analyze, demo, db, jobs, users, vocab, transcripts."""

from __future__ import annotations

from namesake.cli import admin, analyze, cache, transcripts  # noqa: F401  (each registers its commands on `app`)
from namesake.cli.base import app

__all__ = ["app", "main"]


def main() -> None:  # pragma: no cover - console entry point
    """Entry point for `python -m namesake.cli`."""
    app()
