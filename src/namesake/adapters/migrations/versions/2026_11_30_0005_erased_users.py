"""erased users: a tombstone that refuses a late write for a user erased moments ago

Revision ID: 2026_11_30_0005
Revises: 2026_11_30_0004
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_30_0005"
down_revision = "2026_11_30_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erased_users",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("erased_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name="pk_erased_users"),
    )


def downgrade() -> None:
    op.drop_table("erased_users")
