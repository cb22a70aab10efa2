"""the corrections memory's mirror named as the code names it: reliability_corrections_quarantine → correction_mirror

Its constraints, indexes and id sequence are renamed with it, so that the names the models give stay true; a
check is named by the column it checks, as the models name it (some had names cut short to fit).

Revision ID: 2026_12_05_0012
Revises: 2026_12_04_0011
Create Date: 2026-12-05
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "2026_12_05_0012"
down_revision = "2026_12_04_0011"
branch_labels = None
depends_on = None

OLD, NEW = "reliability_corrections_quarantine", "correction_mirror"
# The checks by the column they check: as the models name them, and as the earlier migrations made them (their
# downgrades drop them by those names).
CHECKS = ("status", "action", "frequency", "scope")
EARLIER_CHECKS = {
    "status": "ck_reliability_corrections_quarantine_ck_reliability_co_72fc",
    "frequency": "ck_reliability_corrections_quarantine_ck_reliability_co_e6c4",
    "action": "ck_reliability_corrections_quarantine_ck_reliability_co_4676",
    "scope": "ck_reliability_corrections_quarantine_scope",
}


def _rename(old: str, new: str, checks: dict[str, str]) -> None:
    """The table, then every constraint, index and sequence whose name carries the old table name; `checks`: the
    name each check takes, by the column it checks."""
    op.rename_table(old, new)
    conn = op.get_bind()
    constraints: list[str] = list(
        conn.execute(
            sa.text("SELECT conname FROM pg_constraint WHERE conrelid = CAST(:t AS regclass)"), {"t": new}
        ).scalars()
    )
    for name in [c for c in constraints if old in c]:  # an index behind a constraint is renamed with it
        op.execute(f'ALTER TABLE {new} RENAME CONSTRAINT "{name}" TO "{name.replace(old, new)}"')
    defined = conn.execute(
        sa.text("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = CAST(:t AS regclass)"
                " AND contype = 'c'"), {"t": new},
    ).all()  # fmt: skip
    for check, definition in defined:
        column = re.search(r"\(+(\w+)", str(definition))
        wanted = checks.get(column.group(1), str(check)) if column else str(check)
        if wanted != check:
            op.execute(f'ALTER TABLE {new} RENAME CONSTRAINT "{check}" TO "{wanted}"')
    indexes: list[str] = list(
        conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = :t"), {"t": new}).scalars()
    )
    for name in [i for i in indexes if old in i]:
        op.execute(f'ALTER INDEX "{name}" RENAME TO "{name.replace(old, new)}"')
    op.execute(f"ALTER SEQUENCE IF EXISTS {old}_id_seq RENAME TO {new}_id_seq")


def upgrade() -> None:
    _rename(OLD, NEW, {column: f"ck_{NEW}_{column}" for column in CHECKS})


def downgrade() -> None:
    _rename(NEW, OLD, EARLIER_CHECKS)
