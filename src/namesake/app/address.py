"""Where a running `namesake serve` listens, left in its data dir while it serves (`namesake analyze` reads it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from namesake.core import Settings

SERVE_FILE = "serve.json"


def serve_file(settings: Settings) -> Path:
    """The file a running server says where it listens in."""
    return settings.namesake_data_dir / SERVE_FILE


def announce(settings: Settings, host: str, port: int) -> None:
    """Say where this process serves (once it is ready to answer)."""
    path = serve_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    path.write_text(json.dumps({"url": f"http://{reach}:{port}", "pid": os.getpid()}), encoding="utf-8")


def withdraw(settings: Settings) -> None:
    """Take the address back when this process stops serving (another's is left alone)."""
    path = serve_file(settings)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def announced_url(settings: Settings) -> str | None:
    """The address a live server left here (None when none did, or it died without taking it back)."""
    try:
        said = json.loads(serve_file(settings).read_text(encoding="utf-8"))
        os.kill(int(said["pid"]), 0)
        return str(said["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
