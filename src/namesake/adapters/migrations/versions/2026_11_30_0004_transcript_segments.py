"""a transcript keeps the segment texts it was last analysed with, and when: what the review page shows

Revision ID: 2026_11_30_0004
Revises: 2026_11_30_0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "2026_11_30_0004"
down_revision = "2026_11_30_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("transcripts", sa.Column("segments", postgresql.JSONB(), nullable=True))
    op.add_column("transcripts", sa.Column("analyzed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("transcripts", "analyzed_at")
    op.drop_column("transcripts", "segments")
