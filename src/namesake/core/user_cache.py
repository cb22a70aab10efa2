"""Files in the user cache (NAMESAKE_CACHE_DIR) that any process may rebuild: written whole or not at all."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def keep(path: Path, data: bytes, what: str) -> None:
    """Write `data` beside `path`, then rename it over: a reader never meets half a file, and two processes
    writing at once leave one whole. A cache that cannot be written (read-only home) is said and skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        aside.write_bytes(data)
        aside.replace(path)
    except OSError as exc:
        log.warning("%s not kept in %s: %s", what, path.parent, exc)
