"""Who may write for a user: every write path claims the user first, erasure holds the same lock alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from namesake.adapters import ErasedTranscript, ErasedUser, User
from namesake.core import GoneError

# Taken shared by every unit that creates a transcript's collection, exclusively by the sweep of collections
# no transcript owns: a collection made in a unit not yet committed is never mistaken for an orphan.
COLLECTIONS_LOCK = "transcript-collections"


def hold_collections_shared(s: Session) -> None:
    """In session `s`: no orphan sweep runs until this unit (which may create a collection) ends."""
    s.execute(text("SELECT pg_advisory_xact_lock_shared(hashtextextended(:k, 0))"), {"k": COLLECTIONS_LOCK})


def user_lock_key(user_id: str) -> str:
    """The advisory-lock key of a user: writes take it shared (per transaction), erasure exclusively."""
    return f"user:{user_id}"


def claim_user(s: Session, user_id: str, grace_seconds: int, *, register: bool = True) -> None:
    """Start a write for the user in session `s`: their shared lock, no recent erasure, their row.

    Erasure holds the lock exclusively: a write in flight finishes first (and is erased with the rest),
    and a write that comes after within `grace_seconds` of the erasure is refused (GoneError, 410):
    a request already under way never brings an erased user back.
    """
    s.execute(text("SELECT pg_advisory_xact_lock_shared(hashtextextended(:k, 0))"), {"k": user_lock_key(user_id)})
    erased_at = s.scalar(select(ErasedUser.erased_at).where(ErasedUser.user_id == user_id))
    if erased_at is not None:
        if erased_at > datetime.now(UTC) - timedelta(seconds=grace_seconds):
            raise GoneError(f"user {user_id!r} was erased at {erased_at.isoformat()}: nothing written", field="user_id")
        s.execute(delete(ErasedUser).where(ErasedUser.user_id == user_id))  # long ago: a new user of that id
    if register:  # a write that creates (forgetting one correction creates nothing)
        s.execute(insert(User).values(id=user_id).on_conflict_do_nothing())


def mark_erased(s: Session, user_id: str) -> None:
    """Leave the tombstone (the id and when) that claim_user reads."""
    stmt = insert(ErasedUser).values(user_id=user_id)
    s.execute(
        stmt.on_conflict_do_update(index_elements=[ErasedUser.user_id], set_={"erased_at": stmt.excluded.erased_at})
    )


def mark_transcripts_erased(s: Session, transcript_ids: list[str], grace_seconds: int) -> None:
    """Leave a tombstone per transcript of the erased user (and clear those past the grace: the table stays small)."""
    s.execute(
        delete(ErasedTranscript).where(
            ErasedTranscript.erased_at < datetime.now(UTC) - timedelta(seconds=grace_seconds)
        )
    )
    if transcript_ids:
        stmt = insert(ErasedTranscript).values([{"transcript_id": t} for t in transcript_ids])
        s.execute(
            stmt.on_conflict_do_update(
                index_elements=[ErasedTranscript.transcript_id], set_={"erased_at": stmt.excluded.erased_at}
            )
        )


def check_transcript_not_erased(s: Session, transcript_id: str, grace_seconds: int) -> None:
    """GoneError (410) if the transcript went with its user's erasure less than `grace_seconds` ago."""
    erased_at = s.scalar(select(ErasedTranscript.erased_at).where(ErasedTranscript.transcript_id == transcript_id))
    if erased_at is not None and erased_at > datetime.now(UTC) - timedelta(seconds=grace_seconds):
        raise GoneError(
            f"transcript {transcript_id!r} was erased with its user at {erased_at.isoformat()}: nothing written",
            field="transcript_id",
        )


def forget_transcript_erasure(s: Session, transcript_id: str) -> None:
    """A new transcript of that id is another transcript: its predecessor's tombstone goes."""
    s.execute(delete(ErasedTranscript).where(ErasedTranscript.transcript_id == transcript_id))


def user_count_in(s: Session, user_id: str) -> int:
    """1 while the user's row exists, else 0: what an erasure receipt counts of this table."""
    return int(s.scalar(select(func.count()).select_from(User).where(User.id == user_id)) or 0)


def delete_user_in(s: Session, user_id: str) -> None:
    """The user's row deleted: every row of theirs in other tables goes with it (foreign keys cascade)."""
    s.execute(delete(User).where(User.id == user_id))


def next_correction_number_in(s: Session, user_id: str) -> int:
    """The user's next correction number, under their row's lock: one writer numbers at a time."""
    numbered = update(User).where(User.id == user_id).values(correction_seq=User.correction_seq + 1)
    return int(s.execute(numbered.returning(User.correction_seq)).scalar_one())
