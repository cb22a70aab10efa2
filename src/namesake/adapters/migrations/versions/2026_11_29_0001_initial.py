"""initial schema: users, transcripts, suggestions, corrections mirror, vocabulary, job runs

Revision ID: 2026_11_29_0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision = "2026_11_29_0001"
down_revision = None
branch_labels = None
depends_on = None

NOW = sa.text("now()")


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
    )
    op.create_table(
        "transcripts",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("language", sa.String(16)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_transcripts"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE", name="fk_transcripts_user_id_users"),
    )
    op.create_index("ix_transcripts_user_id", "transcripts", ["user_id"])
    op.create_table(
        "suggestions",
        sa.Column("id", pg.UUID(as_uuid=True), nullable=False),
        sa.Column("transcript_id", sa.Text(), nullable=False),
        sa.Column("segment_id", sa.Text(), nullable=False),
        sa.Column("start_char", sa.Integer(), nullable=False),
        sa.Column("end_char", sa.Integer(), nullable=False),
        sa.Column("original", sa.Text(), nullable=False),
        sa.Column("final", sa.Text(), nullable=False),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("signals", pg.JSONB(), server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name="pk_suggestions"),
        sa.ForeignKeyConstraint(
            ["transcript_id"], ["transcripts.id"], ondelete="CASCADE", name="fk_suggestions_transcript_id_transcripts"
        ),
        sa.UniqueConstraint(
            "transcript_id", "segment_id", "start_char", "end_char", "final", name="uq_suggestions_span"
        ),
        sa.CheckConstraint("status IN ('auto_applied','pending','validated','rejected')", name="ck_suggestions_status"),
        sa.CheckConstraint("start_char >= 0 AND end_char > start_char", name="ck_suggestions_span"),
    )
    op.create_index("ix_suggestions_transcript_id", "suggestions", ["transcript_id"])
    op.create_table(
        "reliability_corrections_quarantine",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("qdrant_point_id", pg.UUID(as_uuid=True), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("original", sa.Text(), nullable=False),
        sa.Column("original_norm", sa.Text(), nullable=False),
        sa.Column("final", sa.Text(), nullable=False),
        sa.Column("final_norm", sa.Text(), nullable=False),
        sa.Column("action", sa.String(8), nullable=False),
        sa.Column("frequency", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("context_phrase", sa.Text(), server_default=sa.text("''"), nullable=False),
        sa.Column("quarantine_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("promoted_to_canonical", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("status", sa.String(16), server_default=sa.text("'active'"), nullable=False),
        sa.Column("supersedes_id", sa.BigInteger()),
        sa.Column("source_suggestion_ids", pg.ARRAY(sa.Text()), server_default=sa.text("'{}'::text[]"), nullable=False),
        sa.Column("transcript_id", sa.Text()),
        sa.Column("payload_schema_version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("embedding_model", sa.Text(), nullable=False),
        sa.Column("embedding_model_version", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reliability_corrections_quarantine"),
        sa.UniqueConstraint("qdrant_point_id", name="uq_reliability_corrections_quarantine_qdrant_point_id"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], ondelete="CASCADE", name="fk_reliability_corrections_quarantine_user_id_users"
        ),
        sa.ForeignKeyConstraint(
            ["supersedes_id"],
            ["reliability_corrections_quarantine.id"],
            ondelete="SET NULL",
            name="fk_reliability_corrections_quarantine_supersedes_id",
        ),
        sa.CheckConstraint("status IN ('active','superseded')", name="ck_reliability_corrections_quarantine_status"),
        sa.CheckConstraint("action IN ('accept','edit')", name="ck_reliability_corrections_quarantine_action"),
        sa.CheckConstraint("frequency >= 1", name="ck_reliability_corrections_quarantine_frequency"),
    )
    op.create_index("ix_reliability_corrections_quarantine_user_id", "reliability_corrections_quarantine", ["user_id"])
    op.create_index(
        "uq_reliability_corrections_quarantine_active",
        "reliability_corrections_quarantine",
        ["user_id", "entity_type", "original_norm"],
        unique=True,
        postgresql_where=sa.text("status = 'active'"),
    )
    op.create_table(
        "canonical_vocabulary",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("user_id", sa.Text()),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("value_norm", sa.Text(), nullable=False),
        sa.Column("support_users", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("support_frequency", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("promoted_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_canonical_vocabulary"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], ondelete="CASCADE", name="fk_canonical_vocabulary_user_id_users"
        ),
        sa.CheckConstraint("scope IN ('user','global')", name="ck_canonical_vocabulary_scope"),
        sa.CheckConstraint("(scope = 'user') = (user_id IS NOT NULL)", name="ck_canonical_vocabulary_scope_user"),
    )
    op.create_index("ix_canonical_vocabulary_user_id", "canonical_vocabulary", ["user_id"])
    op.create_index(
        "uq_canonical_vocabulary_user_value",
        "canonical_vocabulary",
        ["user_id", "entity_type", "value_norm"],
        unique=True,
        postgresql_where=sa.text("scope = 'user'"),
    )
    op.create_index(
        "uq_canonical_vocabulary_global_value",
        "canonical_vocabulary",
        ["entity_type", "value_norm"],
        unique=True,
        postgresql_where=sa.text("scope = 'global'"),
    )
    op.create_table(
        "job_runs",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("job", sa.String(32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("counts", pg.JSONB(), server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("error", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_job_runs"),
    )
    op.create_index("ix_job_runs_job", "job_runs", ["job"])


def downgrade() -> None:
    op.drop_table("job_runs")
    op.drop_table("canonical_vocabulary")
    op.drop_table("reliability_corrections_quarantine")
    op.drop_table("suggestions")
    op.drop_table("transcripts")
    op.drop_table("users")
