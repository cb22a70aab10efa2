"""Daily promotion: frequent corrections whose quarantine ended become canonical vocabulary."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from namesake.adapters import CanonicalVocabulary, CorrectionMirror, Database, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, SEPARATOR, Settings, key_scopes
from namesake.domain import CorrectionStatus
from namesake.reliability import TYPE_LISTS

log = logging.getLogger(__name__)
Progress = Callable[[int], None]


@dataclass
class PromotionReport:
    """Counts of one promotion run."""

    promoted: int = 0
    user_entries: int = 0
    global_entries: int = 0
    global_withdrawn: int = 0
    pages: int = 0
    alert: bool = False
    points_flagged: int = 0
    points_deleted: int = 0


def eligible(*, now: datetime, min_freq: int) -> ColumnElement[bool]:
    """The SQL condition a correction must meet to be promoted."""
    return (
        (CorrectionMirror.status == CorrectionStatus.ACTIVE)
        & (CorrectionMirror.promoted_to_canonical.is_(False))
        & (CorrectionMirror.frequency >= min_freq)
        & (CorrectionMirror.quarantine_until <= now)
    )


# A stored user id's tenant ('' for the default namespace): namesake.core.tenancy.tenant_of in SQL.
_TENANT = f"CASE WHEN strpos(user_id, '{SEPARATOR}') > 0 THEN split_part(user_id, '{SEPARATOR}', 1) ELSE '' END"
_SUPPORT = f"count(DISTINCT user_id) >= :min_users AND count(DISTINCT {_TENANT}) >= :min_tenants"
_SUPPORTED = f"""
    SELECT entity_type, value_norm FROM canonical_vocabulary WHERE scope = 'user'
    GROUP BY entity_type, value_norm HAVING {_SUPPORT}
"""
_UPSERT_GLOBALS = text(f"""
    INSERT INTO canonical_vocabulary (scope, user_id, entity_type, value, value_norm, support_users, support_frequency)
    SELECT 'global', NULL, entity_type, min(value), value_norm, count(DISTINCT user_id), sum(support_frequency)
    FROM canonical_vocabulary WHERE scope = 'user'
    GROUP BY entity_type, value_norm HAVING {_SUPPORT}
    ON CONFLICT (entity_type, value_norm) WHERE scope = 'global'
    DO UPDATE SET support_users = excluded.support_users, support_frequency = excluded.support_frequency
""")
_WITHDRAW_GLOBALS = text(f"""
    DELETE FROM canonical_vocabulary WHERE scope = 'global'
    AND (entity_type, value_norm) NOT IN ({_SUPPORTED})
""")


def min_tenants(settings: Settings) -> int:
    """How many tenants a global entry needs: 2 once tenant keys exist (a tenant's words reach no other
    tenant on its own), 1 without tenants; RELIABILITY_CORRECTIONS_MEMORY_PROMO_MIN_TENANTS overrides."""
    if settings.reliability_corrections_memory_promo_min_tenants is not None:
        return settings.reliability_corrections_memory_promo_min_tenants
    has_tenants = any(not scope.is_admin for _, scope in key_scopes(settings.namesake_api_keys))
    return 2 if has_tenants else 1


def refresh_global_vocabulary(s: Session, min_users: int, tenants: int) -> tuple[int, int]:
    """Global entries = values at least min_users users of `tenants` tenants promoted; withdraw the rest.

    Returns (global entries upserted, global entries withdrawn). Globals carry no user id: an erased user's
    support disappears with their user-scope rows, and the next refresh lowers or withdraws the global.
    Two set-based statements, whatever the vocabulary's size.
    """
    params = {"min_users": min_users, "min_tenants": tenants}
    upserted = cast(CursorResult[Any], s.execute(_UPSERT_GLOBALS, params)).rowcount
    withdrawn = cast(CursorResult[Any], s.execute(_WITHDRAW_GLOBALS, params)).rowcount
    return int(upserted or 0), int(withdrawn or 0)


class CorrectionsMemoryPromotion:
    """Promotes eligible corrections page by page (keyset), flags or deletes their points, refreshes globals."""

    def __init__(
        self,
        db: Database,
        store: VectorStore,
        settings: Settings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_alert: Callable[[int], None] | None = None,
    ) -> None:
        self.db, self.store, self.settings, self.clock, self.on_alert = db, store, settings, clock, on_alert

    def count_eligible(self) -> int:
        """How many corrections the next run would promote (for progress bars)."""
        cond = eligible(now=self.clock(), min_freq=self.settings.reliability_corrections_memory_promo_min_freq)
        with self.db.session() as s:
            return int(s.scalar(select(func.count()).select_from(CorrectionMirror).where(cond)) or 0)

    def run(self, progress: Progress | None = None) -> PromotionReport:
        """One promotion run; each page commits on its own, so a crash loses at most one page of work."""
        st = self.settings
        now, report, last_id = self.clock(), PromotionReport(), 0
        cond = eligible(now=now, min_freq=st.reliability_corrections_memory_promo_min_freq)
        while True:
            with self.db.session() as s:
                page = s.scalars(
                    select(CorrectionMirror)
                    .where(cond, CorrectionMirror.id > last_id)
                    .order_by(CorrectionMirror.id)
                    .limit(st.reliability_corrections_memory_promo_batch_size)
                    .with_for_update(skip_locked=True)
                ).all()
                if not page:
                    break
                last_id = page[-1].id
                report.user_entries += self._promote_page(s, page)
                self._update_points(page, report)
                s.execute(
                    update(CorrectionMirror)
                    .where(CorrectionMirror.id.in_([r.id for r in page]))
                    .values(promoted_to_canonical=True, updated_at=func.now())
                )
            report.promoted += len(page)
            report.pages += 1
            if progress is not None:
                progress(len(page))
        with self.db.session() as s:
            report.global_entries, report.global_withdrawn = refresh_global_vocabulary(
                s, st.reliability_corrections_memory_promo_min_users, min_tenants(st)
            )
        if report.promoted > st.reliability_corrections_memory_promo_alert_threshold:
            report.alert = True
            log.warning(
                "ALERT promotion promoted %d corrections in one run (threshold %d)",
                report.promoted,
                st.reliability_corrections_memory_promo_alert_threshold,
            )
            if self.on_alert is not None:
                self.on_alert(report.promoted)
        return report

    @staticmethod
    def _promote_page(s: Session, page: Sequence[CorrectionMirror]) -> int:
        merged: dict[tuple[str, str, str], dict[str, object]] = {}
        for r in page:  # one row per (user, type, value): several originals may share a final
            key = (r.user_id, r.entity_type, r.final_norm)
            row = merged.setdefault(
                key,
                {"scope": "user", "user_id": r.user_id, "entity_type": r.entity_type, "value": r.final,
                 "value_norm": r.final_norm, "support_users": 1, "support_frequency": 0},
            )  # fmt: skip
            row["support_frequency"] = int(str(row["support_frequency"])) + r.frequency
        rows = list(merged.values())
        stmt = insert(CanonicalVocabulary)
        stmt = stmt.on_conflict_do_update(
            index_elements=["user_id", "entity_type", "value_norm"],
            index_where=text("scope = 'user'"),
            set_={"support_frequency": CanonicalVocabulary.support_frequency + stmt.excluded.support_frequency},
        )
        s.execute(stmt, rows)  # executemany: compiled once, sent in batches
        return len(rows)

    def _update_points(self, page: Sequence[CorrectionMirror], report: PromotionReport) -> None:
        ids = [r.qdrant_point_id for r in page]
        if self.settings.reliability_corrections_memory_delete_after_promo:
            self.store.delete(CORRECTIONS_COLLECTION, ids)
            report.points_deleted += len(ids)
        else:
            self.store.set_payload(CORRECTIONS_COLLECTION, ids, {"promoted_to_canonical": True})
            report.points_flagged += len(ids)


def promoted_vocabulary(
    db: Database, user_id: str | None, *, max_user: int = 1_000, max_global: int = 1_000
) -> dict[str, list[str]]:
    """The user's and the global promoted values, by list, most supported first: at most max_user of the
    user's and max_global of the global ones (the user's first among equals), however many are promoted."""
    with db.session() as s:
        return promoted_vocabulary_in(s, user_id, max_user=max_user, max_global=max_global)


def promoted_vocabulary_in(
    s: Session, user_id: str | None, *, max_user: int = 1_000, max_global: int = 1_000
) -> dict[str, list[str]]:
    """promoted_vocabulary, read in session `s`."""
    by_support = (CanonicalVocabulary.support_frequency.desc(), CanonicalVocabulary.id)
    own = select(CanonicalVocabulary).where(CanonicalVocabulary.user_id == (user_id or ""))
    shared = select(CanonicalVocabulary).where(CanonicalVocabulary.scope == "global")
    out: dict[str, list[str]] = {}
    mine = s.scalars(own.order_by(*by_support).limit(max_user)).all()
    everyone = s.scalars(shared.order_by(*by_support).limit(max_global)).all()
    rows = sorted([*mine, *everyone], key=lambda r: (-r.support_frequency, r.scope != "user", r.id))
    for row in rows:
        out.setdefault(TYPE_LISTS.get(row.entity_type, "keywords"), []).append(row.value)
    return out
