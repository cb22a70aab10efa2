"""PostgreSQL schema (the source of truth); alembic revisions mirror these tables exactly."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from namesake.domain import CorrectionStatus, MemoryScope, ReviewAction, SuggestionStatus

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# How a correction can be taught: a decision that teaches (accept, edit) or a fix by hand.
CORRECTION_ACTIONS = (ReviewAction.ACCEPT, ReviewAction.EDIT, ReviewAction.MANUAL)


def _one_of(column: str, values: Iterable[str]) -> str:
    """A CHECK that a column holds one of an enum's values, written as the migrations wrote it."""
    return f"{column} IN ({','.join(repr(str(v)) for v in values)})"


class Base(DeclarativeBase):
    """Declarative base carrying the explicit constraint naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _now() -> Any:
    return mapped_column(DateTime(timezone=True), nullable=False, server_default=func.now())


class User(Base):
    """A user of the product; created on first reference, erased with everything they own."""

    __tablename__ = "users"
    id: Mapped[str] = mapped_column(Text, primary_key=True)
    created_at: Mapped[datetime] = _now()
    # the number of this user's last correction: theirs are numbered 1, 2, 3… whatever other users do
    correction_seq: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default=text("0"))


class ForgottenRefusal(Base):
    """A refusal the user took back at `forgotten_at`: rejections decided before it no longer count."""

    __tablename__ = "forgotten_refusals"
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    original_norm: Mapped[str] = mapped_column(Text, primary_key=True)  # refusal_policy.refusal_key's two parts
    final_key: Mapped[str] = mapped_column(Text, primary_key=True)
    forgotten_at: Mapped[datetime] = _now()


class ErasedUser(Base):
    """A tombstone: the user was erased at `erased_at`; a write for them is refused for ERASURE_GRACE_SECONDS.

    It keeps the id only (no personal data): what lets a request already in flight when the erasure ran
    fail with 410 instead of bringing the user back.
    """

    __tablename__ = "erased_users"
    user_id: Mapped[str] = mapped_column(Text, primary_key=True)
    erased_at: Mapped[datetime] = _now()


class ErasedTranscript(Base):
    """A tombstone: the transcript went with its user's erasure at `erased_at`; a decision on one of its suggestions
    answers 410 `USER_ERASED` for ERASURE_GRACE_SECONDS (the route names the transcript, not the user)."""

    __tablename__ = "erased_transcripts"
    transcript_id: Mapped[str] = mapped_column(Text, primary_key=True)
    erased_at: Mapped[datetime] = _now()


class Transcript(Base):
    """One analysed meeting transcript, owned by one user."""

    __tablename__ = "transcripts"
    id: Mapped[str] = mapped_column(Text, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    language: Mapped[str | None] = mapped_column(String(16))
    # [{id, text}] as last analysed: the review page shows suggestions in place
    segments: Mapped[list[dict[str, str]] | None] = mapped_column(JSONB)
    analyzed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = _now()


class SuggestionRow(Base):
    """A correction proposed by the pipeline for one span, and the reviewer's decision on it."""

    __tablename__ = "suggestions"
    __table_args__ = (
        UniqueConstraint("transcript_id", "segment_id", "start_char", "end_char", "final", name="uq_suggestions_span"),
        CheckConstraint(f"status IN ({','.join(repr(s.value) for s in SuggestionStatus)})", name="status"),
        CheckConstraint("start_char >= 0 AND end_char > start_char", name="span"),
    )
    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    transcript_id: Mapped[str] = mapped_column(
        ForeignKey("transcripts.id", ondelete="CASCADE"), nullable=False, index=True
    )
    segment_id: Mapped[str] = mapped_column(Text, nullable=False)
    start_char: Mapped[int] = mapped_column(Integer, nullable=False)
    end_char: Mapped[int] = mapped_column(Integer, nullable=False)
    original: Mapped[str] = mapped_column(Text, nullable=False)
    final: Mapped[str] = mapped_column(Text, nullable=False)
    entity_type: Mapped[str] = mapped_column(String(32), nullable=False)
    confidence: Mapped[float] = mapped_column(Float, nullable=False)
    signals: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, server_default=text("'{}'::jsonb"))
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    source: Mapped[str] = mapped_column(String(32), nullable=False)
    # the words around the span when it was analysed: what a decision teaches the memory with it
    context_phrase: Mapped[str] = mapped_column(Text, nullable=False, server_default=text("''"))
    created_at: Mapped[datetime] = _now()
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # what a decision replaced, so that undo can put it back (NULL while undecided)
    previous_status: Mapped[str | None] = mapped_column(String(16))
    proposed_final: Mapped[str | None] = mapped_column(Text)
    proposed_entity_type: Mapped[str | None] = mapped_column(String(32))
    # the suggestion under whose id the decision taught the memory (a group shares its first member's write)
    taught_with: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))


class CorrectionMirror(Base):
    """Mirror row of one corrections-memory point; PostgreSQL is the truth, Qdrant the index."""

    __tablename__ = "correction_mirror"
    __table_args__ = (
        Index("uq_correction_mirror_user_seq", "user_id", "user_seq", unique=True),
        Index(
            "uq_correction_mirror_active",
            "user_id",
            "entity_type",
            "original_norm",
            unique=True,
            postgresql_where=text(f"status = '{CorrectionStatus.ACTIVE}'"),
        ),
        CheckConstraint(_one_of("status", CorrectionStatus), name="status"),
        CheckConstraint(_one_of("action", CORRECTION_ACTIONS), name="action"),
        CheckConstraint("frequency >= 1", name="frequency"),
        CheckConstraint(_one_of("scope", MemoryScope), name="scope"),
    )
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    # the id the API shows: numbered per user, so it reveals nothing of other users' (or tenants') volume
    user_seq: Mapped[int | None] = mapped_column(BigInteger)
    qdrant_point_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), nullable=False, unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True)
    entity_type: Mapped[str] = mapped_column(String(32), nullable=False)
    original: Mapped[str] = mapped_column(Text, nullable=False)
    original_norm: Mapped[str] = mapped_column(Text, nullable=False)
    final: Mapped[str] = mapped_column(Text, nullable=False)
    final_norm: Mapped[str] = mapped_column(Text, nullable=False)
    action: Mapped[str] = mapped_column(String(8), nullable=False)
    frequency: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    context_phrase: Mapped[str] = mapped_column(Text, nullable=False, server_default=text("''"))
    quarantine_until: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    promoted_to_canonical: Mapped[bool] = mapped_column(nullable=False, server_default=text("false"))
    status: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text(f"'{CorrectionStatus.ACTIVE}'"))
    supersedes_id: Mapped[int | None] = mapped_column(
        ForeignKey(
            "correction_mirror.id",
            ondelete="SET NULL",
            name="fk_correction_mirror_supersedes_id",
        ),
        index=True,  # ON DELETE SET NULL looks referencing rows up: without it, erasure scans per row
    )
    source_suggestion_ids: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")
    )
    # made as one side of a conflict: the same words were taught another final in the same scope (the row it
    # supersedes); it stands while frequency is 1, until the user teaches one of the two again (repository.in_conflict)
    in_conflict: Mapped[bool] = mapped_column(nullable=False, server_default=text("false"))
    transcript_id: Mapped[str | None] = mapped_column(Text)
    # where it applies next: the transcript it was taught in, calls whose list holds the final, or everywhere
    scope: Mapped[str] = mapped_column(String(12), nullable=False, server_default=text(f"'{MemoryScope.USER}'"))
    # other words the same fix was taught over (a semantic twin reinforced this row): each {"original", "context",
    # "action", "taught_by"}, so that the words heard come back as the user's own (corrections_memory/heard.py)
    also_heard: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, nullable=False, server_default=text("'[]'::jsonb"))
    payload_schema_version: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    embedding_model: Mapped[str] = mapped_column(Text, nullable=False)
    embedding_model_version: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = _now()
    updated_at: Mapped[datetime] = _now()


class ReviewDecision(Base):
    """One decision as the reviewer took it (a group, a fix by hand with its other matches): undone as one, listed in
    the transcript's history; `undone_at` once taken back."""

    __tablename__ = "review_decisions"
    __table_args__ = (Index("ix_review_decisions_transcript_id_created_at", "transcript_id", "created_at"),)
    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    transcript_id: Mapped[str] = mapped_column(ForeignKey("transcripts.id", ondelete="CASCADE"), nullable=False)
    action: Mapped[str] = mapped_column(String(8), nullable=False)
    label: Mapped[str] = mapped_column(Text, nullable=False)
    suggestion_ids: Mapped[list[str]] = mapped_column(ARRAY(Text), nullable=False)
    scope: Mapped[str | None] = mapped_column(String(12))
    created_at: Mapped[datetime] = _now()
    undone_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class CanonicalVocabulary(Base):
    """A promoted value: canonical for one user, or for everyone once enough users support it."""

    __tablename__ = "canonical_vocabulary"
    __table_args__ = (
        CheckConstraint("scope IN ('user','global')", name="scope"),
        CheckConstraint("(scope = 'user') = (user_id IS NOT NULL)", name="scope_user"),
        Index(
            "uq_canonical_vocabulary_user_value",
            "user_id",
            "entity_type",
            "value_norm",
            unique=True,
            postgresql_where=text("scope = 'user'"),
        ),
        Index(
            "uq_canonical_vocabulary_global_value",
            "entity_type",
            "value_norm",
            unique=True,
            postgresql_where=text("scope = 'global'"),
        ),
    )
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    scope: Mapped[str] = mapped_column(String(8), nullable=False)
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    entity_type: Mapped[str] = mapped_column(String(32), nullable=False)
    value: Mapped[str] = mapped_column(Text, nullable=False)
    value_norm: Mapped[str] = mapped_column(Text, nullable=False)
    support_users: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    support_frequency: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    promoted_at: Mapped[datetime] = _now()


class JobRun(Base):
    """One run of a maintenance job, for operators and for the single-runner audit."""

    __tablename__ = "job_runs"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    job: Mapped[str] = mapped_column(String(32), nullable=False, index=True)
    started_at: Mapped[datetime] = _now()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    counts: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, server_default=text("'{}'::jsonb"))
    error: Mapped[str | None] = mapped_column(Text)
