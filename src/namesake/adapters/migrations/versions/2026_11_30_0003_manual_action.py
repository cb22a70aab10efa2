"""a manual fix is remembered as what it is (action 'manual'); a suggestion keeps the words around its span

Revision ID: 2026_11_30_0003
Revises: 2026_11_29_0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_30_0003"
down_revision = "2026_11_29_0002"
branch_labels = None
depends_on = None

TABLE = "reliability_corrections_quarantine"
NAME = "ck_reliability_corrections_quarantine_action"


def upgrade() -> None:
    op.add_column("suggestions", sa.Column("context_phrase", sa.Text(), server_default=sa.text("''"), nullable=False))
    op.drop_constraint(NAME, TABLE, type_="check")
    op.create_check_constraint(NAME, TABLE, "action IN ('accept','edit','manual')")


def downgrade() -> None:
    # a manual fix was recorded as an edit before this revision
    op.execute(f"UPDATE {TABLE} SET action = 'edit' WHERE action = 'manual'")
    op.drop_constraint(NAME, TABLE, type_="check")
    op.create_check_constraint(NAME, TABLE, "action IN ('accept','edit')")
    op.drop_column("suggestions", "context_phrase")
