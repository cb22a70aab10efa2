"""Promotion, GDPR erasure and reconciliation on real PostgreSQL and the embedded Qdrant store."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, insert, select, text

from namesake.adapters.models import CanonicalVocabulary, CorrectionMirror, JobRun, Transcript, User
from namesake.adapters.runtime import Runtime
from namesake.adapters.vectors.base import VectorPoint, VectorStore
from namesake.core.errors import VectorStoreError
from namesake.core.settings import CORRECTIONS_COLLECTION
from namesake.corrections_memory.writer import CorrectionInput, CorrectionsMemoryWriter, mirror_payload
from namesake.jobs import Jobs, RuntimeJobWork
from namesake.jobs.runner import JobAlreadyRunningError
from namesake.transcripts.canonical_index import collection_for
from tests.conftest import analysis_service, retuned

NOW = datetime.now(UTC)
DIM = 512


def bulk_corrections(rt: Runtime, rows: list[dict[str, Any]]) -> list[CorrectionMirror]:
    """Insert mirror rows and their points directly (test data at scale, same layout as the writer's)."""
    rng = np.random.default_rng(0)
    with rt.db.session() as s:
        users = sorted({r["user_id"] for r in rows})
        s.execute(text("INSERT INTO users (id) SELECT unnest(CAST(:u AS text[])) ON CONFLICT DO NOTHING"), {"u": users})
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["user_id"]] = counts.get(r["user_id"], 0) + 1
        taken = s.execute(
            text("UPDATE users SET correction_seq = correction_seq + t.n FROM unnest(CAST(:u AS text[]), "
                 "CAST(:n AS bigint[])) AS t(uid, n) WHERE id = t.uid RETURNING id, correction_seq - t.n"),
            {"u": list(counts), "n": list(counts.values())},
        ).tuples().all()  # fmt: skip
        last = dict(taken)  # numbered per user after their earlier corrections, as the writer numbers them
        for r in rows:
            last[r["user_id"]] += 1
            r.setdefault("user_seq", last[r["user_id"]])
        full = [
            {
                "qdrant_point_id": uuid.uuid4(), "entity_type": "ORG", "original": r["final"].lower() + "x",
                "original_norm": r.get("original_norm", r["final"].lower() + "x"), "final_norm": r["final"].lower(),
                "action": "accept", "frequency": 1, "quarantine_until": NOW - timedelta(days=1), "status": "active",
                "embedding_model": rt.embedder.name, "embedding_model_version": rt.embedder.version, **r,
            }
            for r in rows
        ]  # fmt: skip
        s.execute(insert(CorrectionMirror), full)
        made = list(s.scalars(select(CorrectionMirror).order_by(CorrectionMirror.id)).all())
    for i in range(0, len(made), 1000):
        vecs = rng.normal(size=(len(made[i : i + 1000]), DIM))
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        chunk = made[i : i + 1000]
        pairs = zip(chunk, vecs, strict=True)
        points = [VectorPoint(r.qdrant_point_id, v.tolist(), mirror_payload(r)) for r, v in pairs]
        rt.vectors.upsert(CORRECTIONS_COLLECTION, points)
    return made


def test_promotion_promotes_exactly_the_eligible_set(memory: Runtime) -> None:
    rows: list[dict[str, Any]] = []
    for i in range(10_000):
        kind = i % 5
        rows.append({
            "user_id": f"u{i % 1000}",
            "final": f"Value{i}" if i >= 40 else "Shared Corp",  # 40 users' shared value → global
            "original_norm": f"orig{i}",
            "frequency": 1 if kind == 0 else 5,  # kind 0: too rare
            "quarantine_until": NOW + timedelta(days=3) if kind == 1 else NOW - timedelta(days=1),  # kind 1: running
            "promoted_to_canonical": kind == 2,  # kind 2: already promoted
            "status": "superseded" if kind == 3 else "active",  # kind 3: superseded
        })  # fmt: skip
    made = bulk_corrections(memory, rows)
    expected = {r.id for r in made if r.frequency >= 3 and r.quarantine_until <= NOW and not r.promoted_to_canonical
                and r.status == "active"}  # fmt: skip
    alerts: list[int] = []
    rt = retuned(memory, reliability_corrections_memory_promo_batch_size=700,
                 reliability_corrections_memory_promo_alert_threshold=1000)  # fmt: skip
    outcome = Jobs(RuntimeJobWork(rt), on_alert=alerts.append).promote()
    report = outcome.report
    assert report.promoted == len(expected) == 2000 and report.pages == 3
    with memory.db.session() as s:
        promoted = set(s.scalars(select(CorrectionMirror.id).where(CorrectionMirror.promoted_to_canonical,
                                                                   CorrectionMirror.status == "active")))  # fmt: skip
        assert expected <= promoted
        user_entries = s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "user"))
        cv = CanonicalVocabulary
        globals_ = s.execute(select(cv.value, cv.support_users, cv.user_id).where(cv.scope == "global")).all()
        run = s.get(JobRun, outcome.run_id)
    assert user_entries == report.user_entries
    shared_users = len({r.user_id for r in made if r.id in expected and r.final == "Shared Corp"})
    assert globals_ == [("Shared Corp", shared_users, None)] and shared_users >= 3
    assert alerts == [2000] and report.alert
    assert run is not None and run.status == "succeeded" and run.counts["promoted"] == 2000
    point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [next(r.qdrant_point_id for r in made if r.id in expected)])
    assert point[0].payload["promoted_to_canonical"] == 1
    assert Jobs(RuntimeJobWork(rt)).promote().report.promoted == 0  # nothing left to do


def test_two_runners_started_together_one_runs_one_skips(memory: Runtime) -> None:
    bulk_corrections(memory, [{"user_id": f"u{i}", "final": f"V{i}", "frequency": 5} for i in range(20)])
    started, release = threading.Event(), threading.Event()
    results: list[Any] = []

    def slow_progress(_n: int) -> None:
        started.set()
        release.wait(10)

    jobs = Jobs(RuntimeJobWork(memory))
    first = threading.Thread(target=lambda: results.append(jobs.promote(progress=slow_progress)))
    first.start()
    assert started.wait(10)
    with pytest.raises(JobAlreadyRunningError):
        Jobs(RuntimeJobWork(memory)).promote()
    release.set()
    first.join(10)
    assert results[0].report.promoted == 20


class FailingOnce:
    """The real store, made to fail at its first delete_by_filter: a vector store dying midway."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner, self.failed = inner, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def delete_by_filter(self, name: str, flt: Any) -> None:
        if not self.failed:
            self.failed = True
            raise VectorStoreError("injected failure")
        self.inner.delete_by_filter(name, flt)


def test_erasure_of_one_user_among_a_thousand_converges_after_a_failure(memory: Runtime) -> None:
    rows = [{"user_id": f"user{i:04d}", "final": f"V{i}"} for i in range(1000)]
    rows += [{"user_id": "gone", "final": f"Mine{i}", "original_norm": f"m{i}"} for i in range(30)]
    bulk_corrections(memory, rows)
    with memory.db.session() as s:
        s.add_all([Transcript(id="gone-t1", user_id="gone"), Transcript(id="kept-t1", user_id="user0001")])
    for tid in ("gone-t1", "kept-t1"):
        memory.vectors.ensure_collection(collection_for(tid, memory.settings), DIM)
    flaky = FailingOnce(memory.vectors)
    rt = dataclasses.replace(memory, vectors=flaky)
    with pytest.raises(VectorStoreError):
        Jobs(RuntimeJobWork(rt)).erase_user("gone")
    receipt = Jobs(RuntimeJobWork(rt)).erase_user("gone").as_json()
    assert receipt["remaining"] == {"qdrant_points": 0, "rows": 0}
    assert receipt["deleted"]["collections"] == 1 and receipt["deleted"]["rows"]["users"] == 1
    again = Jobs(RuntimeJobWork(rt)).erase_user("gone").as_json()
    assert again["deleted"]["qdrant_points"] == 0 and again["deleted"]["rows"]["corrections"] == 0
    assert memory.vectors.count(CORRECTIONS_COLLECTION) == 1000
    assert memory.vectors.list_collections() == [CORRECTIONS_COLLECTION, "transcript--kept-t1"]
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).select_from(CorrectionMirror)) == 1000
        assert s.scalar(select(func.count()).select_from(User)) == 1000


def test_erasure_withdraws_a_global_entry_that_loses_its_support(memory: Runtime) -> None:
    bulk_corrections(memory, [{"user_id": u, "final": "Shared Corp", "frequency": 5} for u in ("a", "b", "c")])
    Jobs(RuntimeJobWork(memory)).promote()
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "global")) == 1
    Jobs(RuntimeJobWork(memory)).erase_user("c")
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "global")) == 0
        assert s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "user")) == 2


def test_reconciliation_repairs_the_index_from_postgresql(memory: Runtime) -> None:
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings)
    a = writer.record(CorrectionInput(user_id="u", entity_type="ORG", original="Mitnou", final="MeetNoo"))
    b = writer.record(CorrectionInput(user_id="u", entity_type="ORG", original="Cytova", final="Cytiva"))
    memory.vectors.delete(CORRECTIONS_COLLECTION, [b.point_id])  # lost point
    memory.vectors.set_payload(CORRECTIONS_COLLECTION, [a.point_id], {"frequency": 99})  # drift
    vec = memory.embedder.embed(["orphan"])[0].tolist()
    old, young = uuid.uuid4(), uuid.uuid4()
    now = datetime.now(UTC)  # not the module's NOW: the suite may reach this test past the 300 s grace period
    memory.vectors.upsert(CORRECTIONS_COLLECTION, [
        VectorPoint(old, vec, {"user_id": "u", "created_at": int((now - timedelta(hours=2)).timestamp())}),
        VectorPoint(young, vec, {"user_id": "u", "created_at": int(now.timestamp())}),
    ])  # fmt: skip
    report = Jobs(RuntimeJobWork(memory)).reconcile().report
    assert (report.orphans_deleted, report.orphans_too_young, report.restored, report.drift_repaired) == (1, 1, 1, 1)
    ids = {p.id for p in memory.vectors.scroll(CORRECTIONS_COLLECTION, limit=100)[0]}
    assert ids == {a.point_id, b.point_id, young}
    assert memory.vectors.retrieve(CORRECTIONS_COLLECTION, [a.point_id])[0].payload["frequency"] == 1
    restored = memory.vectors.query(CORRECTIONS_COLLECTION, memory.embedder.embed(["Cytova"])[0].tolist(), limit=1,
                                    flt=None)  # fmt: skip
    assert restored[0].id == b.point_id and restored[0].payload["final"] == "Cytiva"
    assert memory.vectors.count(CORRECTIONS_COLLECTION, None) == 3


def test_scheduler_plans_both_jobs_and_a_held_lock_makes_a_replica_skip(memory: Runtime) -> None:
    from namesake.app.scheduler import start_scheduler
    from namesake.app.services import build_services
    from namesake.jobs.runner import run_exclusive

    at_four = retuned(memory, reliability_corrections_memory_promo_run_hour_utc=4)
    scheduler = start_scheduler(build_services(at_four))
    try:
        jobs = {j.id: j for j in scheduler.get_jobs()}
        assert set(jobs) == {"promotion", "reconciliation"}
        assert jobs["promotion"].next_run_time.hour == 4
        inside: list[str] = []

        def replica_b_tries() -> int:
            jobs["promotion"].func()  # what the other replica's scheduler would run now: it must skip
            inside.append("b ran")
            return 0

        run_exclusive(memory.db, "promotion", replica_b_tries)
    finally:
        scheduler.shutdown(wait=False)
    with memory.db.session() as s:
        statuses = list(s.scalars(select(JobRun.status).where(JobRun.job == "promotion")))
    assert statuses == ["succeeded"] and inside == ["b ran"]  # one run recorded: the guarded call skipped
    scheduler = start_scheduler(build_services(retuned(at_four, transcript_retention_days=90)))
    try:
        retention = {j.id: j for j in scheduler.get_jobs()}["retention"]
        assert (retention.next_run_time.hour, retention.next_run_time.minute) == (4, 30)
    finally:
        scheduler.shutdown(wait=False)


def test_a_global_entry_needs_users_of_two_tenants_once_tenants_exist(memory: Runtime) -> None:
    rt = retuned(memory, namesake_api_keys=["root", "k:tenant-acme", "j:tenant-beta"])
    bulk_corrections(rt, [{"user_id": f"acme~{u}", "final": "Shared Corp", "frequency": 5} for u in "abcd"])
    Jobs(RuntimeJobWork(rt)).promote()  # four users, one tenant: acme's words stay acme's
    with rt.db.session() as s:
        assert s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "global")) == 0
    bulk_corrections(rt, [{"user_id": "beta~e", "final": "Shared Corp", "frequency": 5}])
    Jobs(RuntimeJobWork(rt)).promote()
    with rt.db.session() as s:
        assert s.scalar(select(CanonicalVocabulary.support_users).where(CanonicalVocabulary.scope == "global")) == 5
    Jobs(RuntimeJobWork(rt)).erase_user("beta~e")  # the second tenant leaves: the global goes with it
    with rt.db.session() as s:
        assert s.scalar(select(func.count()).where(CanonicalVocabulary.scope == "global")) == 0


class DeleteFails:
    """The real store whose point deletion fails: forgetting must then change nothing."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def delete(self, name: str, ids: Any) -> None:
        raise VectorStoreError("injected failure")


def test_forgetting_a_correction_is_all_or_nothing(memory: Runtime) -> None:
    from namesake.corrections_memory.forget import forget_correction

    made = bulk_corrections(memory, [{"user_id": "ann", "final": "Acme Corp"}, {"user_id": "ann", "final": "Kept"}])
    target = made[0]
    with pytest.raises(VectorStoreError):
        forget_correction(memory.db, DeleteFails(memory.vectors), "ann", target.user_seq, 60)  # type: ignore[arg-type]
    assert memory.vectors.count(CORRECTIONS_COLLECTION) == 2
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).select_from(CorrectionMirror)) == 2
    assert target.user_seq == 1  # the API's id: numbered per user
    receipt = forget_correction(memory.db, memory.vectors, "ann", target.user_seq, 60).as_json()
    assert receipt["deleted"] == {"rows": 1, "qdrant_points": 1} and receipt["remaining"] == {
        "rows": 0,
        "qdrant_points": 0,
    }
    assert [p.id for p in memory.vectors.retrieve(CORRECTIONS_COLLECTION, [made[1].qdrant_point_id])]
    assert memory.vectors.count(CORRECTIONS_COLLECTION) == 1


def test_promoted_values_reach_the_analysis_bounded_and_most_supported_first(memory: Runtime) -> None:
    from namesake.analysis.inputs import TranscriptIn

    rows = [{"user_id": "pat", "final": final, "original_norm": final.lower() + "x", "frequency": freq}
            for final, freq in (("Zorblax", 9), ("Quillon", 7), ("Vantrix", 5))]  # fmt: skip
    rows += [{"user_id": f"g{u}", "final": "Globex", "original_norm": "globexx", "frequency": 5} for u in range(3)]
    rows += [{"user_id": f"h{u}", "final": "Initech", "original_norm": "initechx", "frequency": 3} for u in range(3)]
    bulk_corrections(memory, rows)
    assert Jobs(RuntimeJobWork(memory)).promote().report.promoted == 9
    rt = retuned(memory, reliability_promoted_max_per_user=2, reliability_promoted_max_global=1)
    service = analysis_service(rt)
    text = "we met Zorblux, Quillonn and Vantrex, then Globexx and Initek"
    body = {"transcript_id": "promo-1", "user_id": "pat", "segments": [{"id": "1", "text": text}]}
    result = service.analyze(TranscriptIn.model_validate(body))
    assert result.stats["canonical_entries"] == 3  # Zorblax, Quillon (the user's top two), Globex (global top one)
    finals = {s.final for s in result.suggestions}
    assert {"Zorblax", "Quillon", "Globex"} >= finals and "Zorblax" in finals
    assert not finals & {"Vantrix", "Initech"}


def test_delete_after_promotion_removes_the_promoted_points_and_keeps_the_rows(memory: Runtime) -> None:
    made = bulk_corrections(memory, [{"user_id": "pat", "final": "Zorblax", "frequency": 5}])
    rt = retuned(memory, reliability_corrections_memory_delete_after_promo=True)
    assert Jobs(RuntimeJobWork(rt)).promote().report.promoted == 1
    assert memory.vectors.retrieve(CORRECTIONS_COLLECTION, [made[0].qdrant_point_id]) == []
    with memory.db.session() as s:
        row = s.get(CorrectionMirror, made[0].id)
        assert row is not None and row.promoted_to_canonical
    kept = bulk_corrections(memory, [{"user_id": "pat", "final": "Quillon", "original_norm": "q", "frequency": 5}])
    Jobs(RuntimeJobWork(memory)).promote()  # the default keeps the point, marked promoted
    [point] = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [kept[-1].qdrant_point_id])
    assert point.payload["promoted_to_canonical"] in (1, True)


def test_a_failed_job_records_its_status_and_error_and_lets_the_next_run_in(memory: Runtime) -> None:
    from namesake.jobs.runner import run_exclusive

    def broken() -> int:
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        run_exclusive(memory.db, "promotion", broken)
    assert run_exclusive(memory.db, "promotion", lambda: 7).counts() == {"result": 7}  # the lock was let go
    with memory.db.session() as s:
        runs = list(s.scalars(select(JobRun).where(JobRun.job == "promotion").order_by(JobRun.id)))
    assert [r.status for r in runs] == ["failed", "succeeded"]
    assert runs[0].error == "RuntimeError: disk on fire" and runs[0].finished_at is not None


def test_reconciliation_drops_collections_no_transcript_owns(memory: Runtime) -> None:

    service = analysis_service(memory)
    service.index_entities("kept", "pat", {"orgs": ["Cytiva"]})
    service.index_entities("acme~kept", "acme~pat", {"orgs": ["Cytiva"]})
    for stray in ("gone", "acme~gone"):  # a collection whose row is gone (a crash between the two)
        memory.vectors.ensure_collection(collection_for(stray, memory.settings), DIM)
    memory.vectors.ensure_collection("legacy-name", DIM)  # not a transcript collection's name: left alone
    report = Jobs(RuntimeJobWork(memory)).reconcile().report
    assert report.orphan_collections_dropped == 2
    left = set(memory.vectors.list_collections())
    assert {collection_for(t, memory.settings) for t in ("kept", "acme~kept")} <= left and "legacy-name" in left
    assert not {collection_for(t, memory.settings) for t in ("gone", "acme~gone")} & left
