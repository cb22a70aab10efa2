"""a taught fix whose words were taught another final in the same scope: kept as a conflict, applied by neither

Revision ID: 2026_12_04_0011
Revises: 2026_12_03_0010
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_12_04_0011"
down_revision = "2026_12_03_0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "reliability_corrections_quarantine",
        sa.Column("in_conflict", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("reliability_corrections_quarantine", "in_conflict")
