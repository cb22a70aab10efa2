"""Progress on stderr that never touches stdout: a live bar on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

# Without a terminal (cron, container logs), a line at most this often, and one at the end.
PLAIN_EVERY_SECONDS = 10.0


class Reporter(Protocol):
    """What a long command calls as it goes."""

    def advance(self, n: int = 1) -> None:
        """n more items done."""
        ...


class _Bar:
    def __init__(self, progress: Progress, label: str, total: int | None) -> None:
        self.progress, self.task = progress, progress.add_task(escape(label), total=total)

    def advance(self, n: int = 1) -> None:
        self.progress.advance(self.task, n)


class _Lines:
    """Plain lines: 'analysing: 40/147 (27%), 12 s' every PLAIN_EVERY_SECONDS, and a last one."""

    def __init__(self, console: Console, label: str, total: int | None) -> None:
        self.console, self.label, self.total = console, label, total
        self.done, self.t0, self.last = 0, time.monotonic(), time.monotonic()

    def line(self) -> None:
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        of = f"/{self.total}" if self.total is not None else ""
        elapsed = time.monotonic() - self.t0
        self.console.print(f"{self.label}: {self.done}{of}{share}, {elapsed:.0f} s", markup=False, highlight=False)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if time.monotonic() - self.last >= PLAIN_EVERY_SECONDS:
            self.last = time.monotonic()
            self.line()


@contextmanager
def show_progress(console: Console, label: str, total: int | None, *, quiet: bool = False) -> Iterator[Reporter]:
    """Report progress on `console` (stderr); stdout is left alone for the records, terminal or not."""
    if quiet:
        yield _Lines(Console(quiet=True), label, total)
        return
    if not console.is_terminal:
        lines = _Lines(console, label, total)
        yield lines
        lines.line()
        return
    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, redirect_stdout=False, redirect_stderr=False,
    )  # fmt: skip
    with bar:
        yield _Bar(bar, label, total)
