"""corrections numbered per user: the ids the API shows no longer count every tenant's corrections

Revision ID: 2026_11_30_0006
Revises: 2026_11_30_0005
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_30_0006"
down_revision = "2026_11_30_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("correction_seq", sa.BigInteger(), server_default=sa.text("0"), nullable=False))
    op.add_column("reliability_corrections_quarantine", sa.Column("user_seq", sa.BigInteger(), nullable=True))
    op.execute(
        "UPDATE reliability_corrections_quarantine AS c SET user_seq = n.seq FROM ("
        " SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY id) AS seq"
        " FROM reliability_corrections_quarantine) AS n WHERE c.id = n.id"
    )
    op.execute(
        "UPDATE users AS u SET correction_seq = m.top FROM ("
        " SELECT user_id, max(user_seq) AS top FROM reliability_corrections_quarantine GROUP BY user_id) AS m"
        " WHERE u.id = m.user_id"
    )
    op.create_index(
        "uq_reliability_corrections_quarantine_user_seq",
        "reliability_corrections_quarantine",
        ["user_id", "user_seq"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("uq_reliability_corrections_quarantine_user_seq", "reliability_corrections_quarantine")
    op.drop_column("reliability_corrections_quarantine", "user_seq")
    op.drop_column("users", "correction_seq")
