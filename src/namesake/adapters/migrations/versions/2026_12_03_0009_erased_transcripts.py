"""the transcript ids of an erased user, for a while: a decision on one answers 410, not 404

Revision ID: 2026_12_03_0009
Revises: 2026_11_30_0008
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_12_03_0009"
down_revision = "2026_11_30_0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erased_transcripts",
        sa.Column("transcript_id", sa.Text(), nullable=False),
        sa.Column("erased_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("transcript_id", name="pk_erased_transcripts"),
    )


def downgrade() -> None:
    op.drop_table("erased_transcripts")
