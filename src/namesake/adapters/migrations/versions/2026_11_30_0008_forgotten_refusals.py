"""a refusal the reviewer took back: the pair may be proposed again, until they reject it again

Revision ID: 2026_11_30_0008
Revises: 2026_11_30_0007
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_30_0008"
down_revision = "2026_11_30_0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "forgotten_refusals",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("original_norm", sa.Text(), nullable=False),
        sa.Column("final_key", sa.Text(), nullable=False),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "original_norm", "final_key", name="pk_forgotten_refusals"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], ondelete="CASCADE", name="fk_forgotten_refusals_user_id_users"
        ),
    )


def downgrade() -> None:
    op.drop_table("forgotten_refusals")
