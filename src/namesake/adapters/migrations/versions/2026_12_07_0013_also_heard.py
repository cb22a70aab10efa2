"""the other words a taught fix was reinforced over (a semantic twin): kept with it, so that they come back too

Revision ID: 2026_12_07_0013
Revises: 2026_12_05_0012
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "2026_12_07_0013"
down_revision = "2026_12_05_0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "correction_mirror",
        sa.Column("also_heard", JSONB(), server_default=sa.text("'[]'::jsonb"), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("correction_mirror", "also_heard")
