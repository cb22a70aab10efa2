"""suggestions keep what a decision replaced, so the reviewer can undo it

Revision ID: 2026_11_30_0007
Revises: 2026_11_30_0006
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "2026_11_30_0007"
down_revision = "2026_11_30_0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # the status and final the pipeline left, before the reviewer's decision (NULL while undecided)
    op.add_column("suggestions", sa.Column("previous_status", sa.String(16), nullable=True))
    op.add_column("suggestions", sa.Column("proposed_final", sa.Text(), nullable=True))
    op.add_column("suggestions", sa.Column("proposed_entity_type", sa.String(32), nullable=True))
    # the suggestion whose memory write a group decision shared (itself when decided alone)
    op.add_column("suggestions", sa.Column("taught_with", UUID(as_uuid=True), nullable=True))


def downgrade() -> None:
    op.drop_column("suggestions", "taught_with")
    op.drop_column("suggestions", "proposed_entity_type")
    op.drop_column("suggestions", "proposed_final")
    op.drop_column("suggestions", "previous_status")
