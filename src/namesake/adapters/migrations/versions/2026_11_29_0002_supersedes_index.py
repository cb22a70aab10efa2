"""index the self-reference of corrections: erasing a user must not scan the table once per row

Revision ID: 2026_11_29_0002
Revises: 2026_11_29_0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "2026_11_29_0002"
down_revision = "2026_11_29_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_reliability_corrections_quarantine_supersedes_id",
        "reliability_corrections_quarantine",
        ["supersedes_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_reliability_corrections_quarantine_supersedes_id", "reliability_corrections_quarantine")
