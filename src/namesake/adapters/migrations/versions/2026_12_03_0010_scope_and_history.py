"""where a taught fix applies next (its scope), and the reviewer's decisions kept for undo and history

Revision ID: 2026_12_03_0010
Revises: 2026_12_03_0009
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "2026_12_03_0010"
down_revision = "2026_12_03_0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "reliability_corrections_quarantine",
        sa.Column("scope", sa.String(length=12), server_default=sa.text("'user'"), nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_reliability_corrections_quarantine_scope"),
        "reliability_corrections_quarantine",
        "scope IN ('transcript','list','user')",
    )
    op.create_table(
        "review_decisions",
        sa.Column("id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("transcript_id", sa.Text(), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("suggestion_ids", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.Column("scope", sa.String(length=12), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["transcript_id"],
            ["transcripts.id"],
            ondelete="CASCADE",
            name="fk_review_decisions_transcript_id_transcripts",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_decisions"),
    )
    op.create_index("ix_review_decisions_transcript_id_created_at", "review_decisions", ["transcript_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_review_decisions_transcript_id_created_at", table_name="review_decisions")
    op.drop_table("review_decisions")
    op.drop_constraint(op.f("ck_reliability_corrections_quarantine_scope"), "reliability_corrections_quarantine")
    op.drop_column("reliability_corrections_quarantine", "scope")
