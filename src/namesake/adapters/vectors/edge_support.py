"""What the Edge adapter (`edge.py`) needs besides its shards: the port's filters in Edge's terms, Edge's errors in
the port's, and the lock that tells a second process at once that a shard folder is open elsewhere."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import qdrant_edge as qe

from namesake.adapters.vectors.base import Filter, Match, MatchAny, Range, storable
from namesake.core import DimensionMismatchError, StoreInUseError, VectorStoreError

# Held (flock) by the process that has the shard open: Edge's write-ahead log locks a shard that keeps one, and a
# transcript's shard keeps none (`edge._has_wal`).
LOCK_FILE = "namesake.lock"


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Edge raises plain exceptions from Rust; callers only ever see VectorStoreError."""
    try:
        yield
    except (VectorStoreError, DimensionMismatchError):
        raise
    except Exception as exc:  # the Rust binding raises untyped errors
        if "WouldBlock" in str(exc):  # another process holds the shard's write-ahead log
            raise StoreInUseError(STORE_IN_USE) from exc
        raise VectorStoreError(f"embedded Qdrant: {what} failed: {exc}") from exc


STORE_IN_USE = (
    "the embedded store is open in another namesake process (is `namesake serve` running on this data dir?): "
    "stop it first, or let the command ask it: `namesake analyze` without --local sends its work there "
    "(POST /v1/reliability/analyze), and export, vocab, jobs and users erase ask it by themselves"
)


def _condition(c: Match | MatchAny | Range) -> qe.FieldCondition:
    if isinstance(c, Match):
        return qe.FieldCondition(key=c.key, match=qe.MatchValue(storable(c.value)))
    if isinstance(c, MatchAny):
        return qe.FieldCondition(key=c.key, match=qe.MatchAny(list(storable(c.values))))
    return qe.FieldCondition(key=c.key, range=qe.RangeFloat(gt=c.gt, gte=c.gte, lt=c.lt, lte=c.lte))


def to_edge_filter(flt: Filter | None) -> qe.Filter | None:
    """Translate the port's filter into Edge's."""
    if flt is None or (not flt.must and not flt.must_not):
        return None
    return qe.Filter(
        must=[_condition(c) for c in flt.must] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


def hold_folder(folder: Path) -> int:
    """Lock a shard's folder for this process, or say at once that another has it open."""
    fd = os.open(folder / LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        os.close(fd)
        raise StoreInUseError(STORE_IN_USE) from exc
    return fd
