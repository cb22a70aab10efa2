"""Files in the user cache (NAMESAKE_CACHE_DIR) that any process may rebuild: written whole or not at all."""

from __future__ import annotations

import logging
import os
import shutil
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


def entries(root: Path) -> list[tuple[str, int]]:
    """What the cache holds, an entry per file or folder two levels down (`language-model/SmolLM2-…`), with its
    size in bytes: what `namesake cache info` lists."""
    if not root.is_dir():
        return []
    out = []
    for top in sorted(root.iterdir()):
        for item in sorted(top.iterdir()) if top.is_dir() else [top]:
            out.append((str(item.relative_to(root)), size_of(item)))
    return out


def size_of(path: Path) -> int:
    """Bytes a file or a folder holds (0 for what vanished meanwhile: another process cleared it)."""
    try:
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:
        return 0


def clear(root: Path) -> int:
    """Remove everything in the cache (any process rebuilds what it needs); the bytes freed."""
    freed = sum(size for _, size in entries(root))
    if root.is_dir():
        for item in root.iterdir():
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
    return freed
