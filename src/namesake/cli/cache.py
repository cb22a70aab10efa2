"""`namesake cache info|clear`: what the user cache holds (files any run rebuilds), and taking it back."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from namesake.cli.base import _settings, app
from namesake.core import clear as clear_cache
from namesake.core import entries as cache_entries

cache_app = typer.Typer(
    help="The user cache: the models' weights, the compiled language model and other rebuilt files."
)
app.add_typer(cache_app, name="cache", no_args_is_help=True)
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object (for scripts).")]


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.1f} kB"


@cache_app.command("info")
def cache_info(as_json: JsonOption = False) -> None:
    """Where the cache is (NAMESAKE_CACHE_DIR), what it holds and how much; all of it is rebuilt when missing."""
    root = _settings().namesake_cache_dir
    listed = cache_entries(root)
    total = sum(size for _, size in listed)
    if as_json:
        body = {"path": str(root), "bytes": total, "entries": [{"name": n, "bytes": s} for n, s in listed]}
        sys.stdout.write(json.dumps(body) + "\n")
        return
    lines = [f"{root}: {_mb(total)}", *(f"  {_mb(size):>10}  {name}" for name, size in listed)]
    sys.stdout.write("\n".join(lines) + "\n")  # not wrapped: names are paths to copy


@cache_app.command("clear")
def cache_clear(as_json: JsonOption = False) -> None:
    """Remove what the cache holds; the next run writes again what it needs (the first one is slower)."""
    root = _settings().namesake_cache_dir
    freed = clear_cache(root)
    if as_json:
        sys.stdout.write(json.dumps({"path": str(root), "freed_bytes": freed}) + "\n")
        return
    sys.stdout.write(f"cleared {root}: {_mb(freed)} freed\n")
