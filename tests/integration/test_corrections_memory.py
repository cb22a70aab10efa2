"""Corrections memory on real PostgreSQL, the embedded Qdrant store and the bundled embedder."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, text

from namesake.adapters.embeddings import CachedEmbedder
from namesake.adapters.models import CorrectionMirror
from namesake.adapters.runtime import Runtime
from namesake.adapters.vectors.base import Filter, Match, VectorPoint
from namesake.core.errors import DimensionMismatchError, StoreError
from namesake.core.settings import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.bootstrap import PAYLOAD_INDEXES, CorrectionsMemoryBootstrap
from namesake.corrections_memory.consolidation import WriteOutcome
from namesake.corrections_memory.reader import CorrectionsMemoryReader
from namesake.corrections_memory.repository import active_corrections, list_corrections
from namesake.corrections_memory.unteach import UnteachOutcome, unteach_in
from namesake.corrections_memory.writer import CorrectionInput, CorrectionsMemoryWriter, WriteResult
from namesake.domain.types import Candidate, CanonicalDictionary, Disposition, MemoryScope, Segment
from namesake.reliability.pipeline import PipelineInputs, run_stages
from tests.conftest import tuned


@pytest.fixture
def memory(runtime: Runtime) -> Runtime:
    """The runtime with the corrections collection bootstrapped."""
    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, runtime.settings).ensure_collection()
    return runtime


def _writer(rt: Runtime, **overrides: object) -> CorrectionsMemoryWriter:
    settings = tuned(rt.settings, **overrides) if overrides else rt.settings
    return CorrectionsMemoryWriter(rt.db, rt.vectors, rt.embedder, settings)


def _fix(user: str = "u1", original: str = "Mitnou", final: str = "MeetNoo", **kw: object) -> CorrectionInput:
    return CorrectionInput(user_id=user, entity_type=str(kw.pop("entity_type", "ORG")), original=original, final=final,
                           **kw)  # type: ignore[arg-type]  # fmt: skip


def _cand(original: str, final: str = "?", entity_type: str = "ORG") -> Candidate:
    return Candidate("1", 0, len(original), original, final, entity_type, "rag")


def _points(rt: Runtime, user: str | None = None) -> int:
    flt = Filter(must=(Match("user_id", user),)) if user else None
    return rt.vectors.count(CORRECTIONS_COLLECTION, flt)


def _active_rows(rt: Runtime) -> list[CorrectionMirror]:
    with rt.db.session() as s:
        return list(s.scalars(select(CorrectionMirror).where(CorrectionMirror.status == "active")).all())


def test_twenty_threads_recording_the_same_correction_leave_one_row_and_one_point(memory: Runtime) -> None:
    writer = _writer(memory)
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda i: writer.record(_fix(source_suggestion_id=f"s{i}")), range(20)))
    assert sorted(r.outcome for r in results).count(WriteOutcome.NEW) == 1
    rows = _active_rows(memory)
    assert len(rows) == 1 and rows[0].frequency == 20 and len(rows[0].source_suggestion_ids) == 20
    assert _points(memory) == 1
    point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [rows[0].qdrant_point_id])[0]
    assert point.payload["frequency"] == 20


def test_the_same_suggestion_accepted_twice_is_a_replay(memory: Runtime) -> None:
    writer = _writer(memory)
    first = writer.record(_fix(source_suggestion_id="sug-1"))
    again = writer.record(_fix(source_suggestion_id="sug-1"))
    assert (first.outcome, again.outcome) == (WriteOutcome.NEW, WriteOutcome.REPLAY)
    assert again.frequency == 1 and _active_rows(memory)[0].frequency == 1


def test_a_failing_mirror_insert_leaves_no_point_and_surfaces(memory: Runtime) -> None:
    with memory.db.engine.begin() as conn:  # a real database failure, raised by PostgreSQL itself
        conn.execute(
            text("""
            CREATE OR REPLACE FUNCTION refuse_boom() RETURNS trigger AS $$
            BEGIN IF NEW.original = 'boom' THEN RAISE EXCEPTION 'mirror refused'; END IF; RETURN NEW; END
            $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_boom BEFORE INSERT ON correction_mirror
            FOR EACH ROW EXECUTE FUNCTION refuse_boom();
        """)
        )
    try:
        with pytest.raises(StoreError, match="mirror refused"):
            _writer(memory).record(_fix(original="boom"))
        assert _points(memory) == 0 and _active_rows(memory) == []
    finally:
        with memory.db.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse_boom ON correction_mirror"))


def test_a_commit_that_fails_leaves_the_index_as_it_was(memory: Runtime) -> None:
    """PostgreSQL refuses at COMMIT (a deferred constraint trigger): every index write is undone."""
    writer = _writer(memory)
    first = writer.record(_fix(original="Mitnou", final="MeetNoo", source_suggestion_id="s1"))
    with memory.db.engine.begin() as conn:
        conn.execute(
            text("""
            CREATE OR REPLACE FUNCTION refuse_at_commit() RETURNS trigger AS $$
            BEGIN RAISE EXCEPTION 'commit refused'; END $$ LANGUAGE plpgsql;
            CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT OR UPDATE ON correction_mirror
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();
        """)
        )
    try:
        for attempt in (
            _fix(original="Zorblax", final="Zorblax Inc"),  # new: its point must go
            _fix(original="Mitnou", final="MeetNoo", source_suggestion_id="s2"),  # reinforce: frequency back
            _fix(original="Mitnou", final="Meet Now", source_suggestion_id="s3"),  # supersede: old point back
        ):
            with pytest.raises(StoreError, match="commit refused"):
                writer.record(attempt)
        rows = _active_rows(memory)
        assert [(r.original, r.final, r.frequency) for r in rows] == [("Mitnou", "MeetNoo", 1)]
        assert _points(memory) == 1
        point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [first.point_id])[0]
        assert point.payload["frequency"] == 1 and point.payload["final"] == "MeetNoo"
    finally:
        with memory.db.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse_at_commit ON correction_mirror"))


def test_a_new_final_taught_for_another_place_supersedes_the_old_one_and_only_it_is_boosted(memory: Runtime) -> None:
    writer = _writer(memory)
    writer.record(_fix(final="MeetNoo", source_suggestion_id="a", scope=MemoryScope.TRANSCRIPT, transcript_id="t1"))
    second = writer.record(_fix(final="Meetnoo SAS", source_suggestion_id="b"))
    assert second.outcome is WriteOutcome.SUPERSEDED
    with memory.db.session() as s:
        rows = {r.final: r for r in s.scalars(select(CorrectionMirror)).all()}
    assert rows["MeetNoo"].status == "superseded" and rows["Meetnoo SAS"].status == "active"
    assert rows["Meetnoo SAS"].supersedes_id == rows["MeetNoo"].id
    assert _points(memory) == 1
    cand = _cand("Mitnou", "MeetNoo")
    stats = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings).boost("u1", [cand])
    assert stats.boosted == 1 and cand.final == "Meetnoo SAS" and cand.memory_bonus > 0
    assert [c["final"] for c in list_corrections(memory.db, "u1")] == ["Meetnoo SAS"]


def test_two_finals_taught_for_the_same_words_and_place_are_a_conflict_until_one_is_taught_again(
    memory: Runtime,
) -> None:
    writer = _writer(memory)
    writer.record(_fix(original="COVERT", final="COVID", transcript_id="call-1", source_suggestion_id="a"))
    second = writer.record(_fix(original="COVERT", final="COVID-19", transcript_id="call-2", source_suggestion_id="b"))
    assert second.outcome is WriteOutcome.CONFLICT
    listed = list_corrections(memory.db, "u1")
    assert [(c["final"], c["state"]) for c in listed] == [("COVID-19", "conflict")]
    assert listed[0]["conflict_with"]["final"] == "COVID" and listed[0]["conflict_with"]["transcript_id"] == "call-1"
    remembered = active_corrections(memory.db, "u1")
    assert [(m.final, m.conflict) for m in remembered] == [("COVID-19", True)]
    # neither applies by itself: shown to the reviewer with the later final, the memory's bonus withheld
    seg = Segment("1", "the COVERT vaccine rollout")
    kept, _ = run_stages(PipelineInputs([seg], CanonicalDictionary(), user_id="u1", remembered=remembered), Settings())
    assert [(c.original, c.final, c.disposition) for c in kept] == [("COVERT", "COVID-19", Disposition.PENDING)]
    # the other side taught again: it is chosen (supersedes, no conflict left), and applies by itself
    third = writer.record(_fix(original="COVERT", final="COVID", transcript_id="call-3", source_suggestion_id="c"))
    assert third.outcome is WriteOutcome.SUPERSEDED
    assert [(c["final"], c["state"]) for c in list_corrections(memory.db, "u1")] == [("COVID", "applying")]
    remembered = active_corrections(memory.db, "u1")
    kept, _ = run_stages(PipelineInputs([seg], CanonicalDictionary(), user_id="u1", remembered=remembered), Settings())
    assert [(c.final, c.disposition) for c in kept] == [("COVID", Disposition.AUTO_APPLIED)]
    # a conflict settled by teaching the same final again: reinforced, applying
    writer.record(_fix(original="Mitnou", final="MeetNoo", source_suggestion_id="d"))
    assert writer.record(_fix(original="Mitnou", final="Meet Now", source_suggestion_id="e")).outcome is (
        WriteOutcome.CONFLICT
    )
    assert writer.record(_fix(original="Mitnou", final="Meet Now", source_suggestion_id="f")).outcome is (
        WriteOutcome.REINFORCED
    )
    states = {c["original"]: (c["final"], c["state"]) for c in list_corrections(memory.db, "u1")}
    assert states["Mitnou"] == ("Meet Now", "applying")
    # the decision that chose it undone: the conflict is back, both finals shown again
    with writer.unit() as work:
        assert unteach_in(writer, work, user_id="u1", suggestion_id="f") is UnteachOutcome.REDUCED
    mitnou = next(c for c in list_corrections(memory.db, "u1") if c["original"] == "Mitnou")
    assert (mitnou["state"], mitnou["conflict_with"]["final"]) == ("conflict", "MeetNoo")


def test_reinforcement_never_merges_a_changed_value(memory: Runtime) -> None:
    # a dedupe threshold low enough that "trois vélos" and "quatre vélos" count as the same text
    writer = _writer(memory, reliability_corrections_memory_dedupe_threshold=0.5)
    writer.record(_fix(original="trois vélos", final="3 vélos", entity_type="KEYWORD"))
    out = writer.record(_fix(original="quatre vélos", final="4 vélos", entity_type="KEYWORD"))
    same = writer.record(_fix(original="trois  vélos!", final="3 vélos", entity_type="KEYWORD"))
    assert out.outcome is WriteOutcome.NEW
    assert same.outcome is WriteOutcome.REINFORCED
    assert sorted((r.final, r.frequency) for r in _active_rows(memory)) == [("3 vélos", 2), ("4 vélos", 1)]


def test_a_semantic_twin_keeps_the_words_heard_and_they_come_back_until_its_decision_is_taken_back(
    memory: Runtime,
) -> None:
    # the write rule reinforces the nearest fix with the same final (a threshold low enough for these two to be
    # twins); the words heard this time are not lost
    writer = _writer(memory, reliability_corrections_memory_dedupe_threshold=0.3)
    said = "we paid with annexes cards"
    writer.record(_fix(original="any ex", final="Amex", source_suggestion_id="s1"))
    twin = writer.record(_fix(original="annexes", final="Amex", source_suggestion_id="s2", action="edit",
                              segment_text=said, start_char=13, end_char=20))  # fmt: skip
    assert twin.outcome is WriteOutcome.REINFORCED and _points(memory) == 1
    taught = {(m.original, m.final, m.frequency, m.action, m.context) for m in active_corrections(memory.db, "u1")}
    assert taught == {("any ex", "Amex", 2, "accept", "any ex"), ("annexes", "Amex", 1, "edit", said)}
    [row] = list_corrections(memory.db, "u1")
    assert (row["original"], row["also_heard"], row["frequency"]) == ("any ex", ["annexes"], 2)
    with writer.unit() as work:
        assert unteach_in(writer, work, user_id="u1", suggestion_id="s2") is UnteachOutcome.REDUCED
    assert [(m.original, m.frequency) for m in active_corrections(memory.db, "u1")] == [("any ex", 1)]
    assert list_corrections(memory.db, "u1")[0]["also_heard"] == []


@pytest.mark.slow
def test_no_boost_ever_crosses_users(memory: Runtime) -> None:
    writer = _writer(memory)
    users = [f"user{i:04d}" for i in range(1000)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda u: writer.record(_fix(user=u, original="Mitnou", final=f"Meetnoo-{u}")), users))
    assert _points(memory) == 1000
    reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings)
    for user in [*users[::50], "stranger"]:
        cand = _cand("Mitnou")
        reader.boost(user, [cand])
        assert cand.final == ("?" if user == "stranger" else f"Meetnoo-{user}")


def test_expired_promoted_and_other_model_corrections_are_ignored(memory: Runtime) -> None:
    now = datetime.now(UTC)
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    writer.record(_fix(original="Alpha", final="ALPHA Corp"))
    promoted = writer.record(_fix(original="Beta", final="BETA Corp"))
    memory.vectors.set_payload(CORRECTIONS_COLLECTION, [promoted.point_id], {"promoted_to_canonical": True})
    vec = memory.embedder.embed(["Gamma"])[0].tolist()
    payload = {
        "user_id": "u1", "entity_type": "ORG", "final": "GAMMA Corp", "frequency": 5, "promoted_to_canonical": 0,
        "quarantine_until": int((now + timedelta(days=9)).timestamp()), "embedding_model": "another-model",
    }  # fmt: skip
    memory.vectors.upsert(CORRECTIONS_COLLECTION, [VectorPoint("00000000-0000-0000-0000-0000000000aa", vec, payload)])
    reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    cands = [_cand("Alpha"), _cand("Beta"), _cand("Gamma")]
    reader.boost("u1", cands)
    assert [c.final for c in cands] == ["ALPHA Corp", "?", "?"]
    later = now + timedelta(days=memory.settings.reliability_corrections_memory_quarantine_days + 1)
    expired = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: later)
    cand = _cand("Alpha")
    assert expired.boost("u1", [cand]).boosted == 0 and cand.final == "?"


def test_a_failing_vector_store_leaves_candidates_unchanged_and_counts(memory: Runtime) -> None:
    _writer(memory).record(_fix())
    memory.vectors.drop_collection(CORRECTIONS_COLLECTION)  # the index is gone: every query fails
    errors: list[int] = []
    reader = CorrectionsMemoryReader(
        memory.vectors, memory.embedder, memory.settings, on_error=lambda: errors.append(1)
    )
    cand = _cand("Mitnou", "X")
    stats = reader.boost("u1", [cand])
    assert stats.errors == 1 and errors == [1]
    assert cand.final == "X" and cand.memory_score is None


def test_bootstrap_is_idempotent_and_refuses_another_dimension(runtime: Runtime) -> None:
    boot = CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, runtime.settings)
    first, second = boot.ensure_collection(), boot.ensure_collection()
    assert first.created and first.indexes_created == [name for name, _, _ in PAYLOAD_INDEXES]
    assert not second.created and second.indexes_created == []
    bad = tuned(runtime.settings, reliability_corrections_memory_vector_dim=1024)
    with pytest.raises(DimensionMismatchError, match="1024") as err:
        CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, bad).ensure_collection()
    assert "512" in str(err.value)
    runtime.vectors.drop_collection(CORRECTIONS_COLLECTION)
    runtime.vectors.ensure_collection(CORRECTIONS_COLLECTION, 1024)
    with pytest.raises(DimensionMismatchError, match="1024"):
        boot.ensure_collection()


def test_mirror_rows_are_counted_per_user(memory: Runtime) -> None:
    writer = _writer(memory)
    writer.record(_fix(user="a"))
    writer.record(_fix(user="b"))
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).select_from(CorrectionMirror)) == 2
    assert _points(memory, "a") == 1


def test_the_exact_path_reads_the_memory_with_the_vector_paths_filters(memory: Runtime) -> None:
    from sqlalchemy import update

    from namesake.adapters.models import CorrectionMirror
    from namesake.corrections_memory.repository import active_corrections

    now = datetime.now(UTC)
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    writer.record(_fix(original="Alpha", final="ALPHA Corp", action="manual"))
    writer.record(_fix(original="Beta", final="BETA Corp"))
    with memory.db.session() as s:
        beta = update(CorrectionMirror).where(CorrectionMirror.original == "Beta")
        s.execute(beta.values(promoted_to_canonical=True))
    [alpha] = active_corrections(memory.db, "u1", now=now)  # Beta is promoted: canonical vocabulary now
    assert alpha.original == "Alpha" and alpha.action == "manual" and alpha.age_days < 0.01  # how and when taught
    assert 2.9 < active_corrections(memory.db, "u1", now=now + timedelta(days=3))[0].age_days < 3.1
    later = now + timedelta(days=memory.settings.reliability_corrections_memory_quarantine_days + 1)
    assert active_corrections(memory.db, "u1", now=later) == []  # expired, as the vector read says


def test_the_boost_embeds_each_original_once_and_answers_the_same(memory: Runtime) -> None:
    CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings).record(_fix())
    embedded: list[str] = []

    class Counting:
        """The runtime's embedder, counting what it is asked to embed."""

        name, version, dim = memory.embedder.name, memory.embedder.version, memory.embedder.dim

        def embed(self, texts: list[str]) -> Any:
            embedded.extend(texts)
            return memory.embedder.embed(texts)

    # as build_embedder composes it: the cache in front of the model
    reader = CorrectionsMemoryReader(memory.vectors, CachedEmbedder(Counting()), memory.settings)
    first = [_cand("Mitnou"), _cand("Mitnou"), _cand("Other")]
    reader.boost("u1", first)
    again = [_cand("Mitnou")]
    reader.boost("u1", again)
    assert sorted(embedded) == ["Mitnou", "Other"]  # once each, across candidates and across runs
    assert first[0].final == first[1].final == again[0].final == "MeetNoo"


def test_the_final_is_cut_at_its_limit_and_the_context_at_its_radius(memory: Runtime) -> None:
    writer = _writer(memory, reliability_corrections_memory_final_text_max_len=10,
                     reliability_corrections_memory_context_radius=5)  # fmt: skip
    segment = "first words then Mitnou said more words after"
    start = segment.index("Mitnou")
    out = writer.record(_fix(final="MeetNoo Incorporated", segment_text=segment, start_char=start,
                             end_char=start + 6, action="manual"))  # fmt: skip
    with memory.db.session() as s:
        row = s.get(CorrectionMirror, out.correction_id)
        assert row is not None
        assert row.final == "MeetNoo In" and row.context_phrase == "then Mitnou said"  # 10 chars; ±5 around
    point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [out.point_id])[0]
    assert point.payload["final"] == "MeetNoo In" and point.payload["context_phrase"] == "then Mitnou said"


def test_a_taught_fix_applies_until_its_date_and_teaching_it_again_renews_it(memory: Runtime) -> None:
    from namesake.corrections_memory.repository import active_corrections

    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = {"now": start}
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings,
                                    clock=lambda: clock["now"])  # fmt: skip
    days = memory.settings.reliability_corrections_memory_quarantine_days

    def boosted(at: datetime) -> bool:
        reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: at)
        cand = _cand("Mitnou")
        reader.boost("u1", [cand])
        return cand.memory_score is not None

    writer.record(_fix(source_suggestion_id="a"))
    [row] = list_corrections(memory.db, "u1", now=start)
    assert row["state"] == "applying" and row["applies_until"] == (start + timedelta(days=days)).isoformat()
    clock["now"] = start + timedelta(days=days - 10)
    writer.record(_fix(source_suggestion_id="b"))  # taught again before it expired: renewed from now
    renewed = clock["now"] + timedelta(days=days)
    [row] = list_corrections(memory.db, "u1", now=clock["now"])
    assert row["frequency"] == 2 and row["applies_until"] == renewed.isoformat()
    after_first_date = start + timedelta(days=days + 5)
    assert boosted(after_first_date) and active_corrections(memory.db, "u1", now=after_first_date)
    later = renewed + timedelta(days=1)
    assert not boosted(later) and active_corrections(memory.db, "u1", now=later) == []
    [row] = list_corrections(memory.db, "u1", now=later)
    assert row["state"] == "expired" and row["applies_until"] is None  # said, not silently listed as active


def test_a_fix_applied_by_itself_every_week_for_three_months_still_applies(memory: Runtime) -> None:
    """Each weekly call applies the fix (the analysis renews what it applied); one never applied again expires."""
    from namesake.corrections_memory.repository import active_corrections

    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = {"now": start}
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings,
                                    clock=lambda: clock["now"])  # fmt: skip

    def applies(at: datetime, original: str) -> bool:
        reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: at)
        cand = _cand(original)
        reader.boost("u1", [cand])
        in_pg = any(c.original == original for c in active_corrections(memory.db, "u1", now=at))
        assert in_pg == (cand.memory_score is not None)  # both stores agree on the date
        return in_pg

    writer.record(_fix(source_suggestion_id="a"))  # Mitnou → MeetNoo: applied every week
    writer.record(_fix(original="Zorbex", final="Zorblax", source_suggestion_id="b"))  # never applied again
    for week in range(1, 14):
        clock["now"] = start + timedelta(weeks=week)
        assert applies(clock["now"], "Mitnou"), f"week {week}"
        assert writer.renew_applied("u1", [("mitnou", "MeetNoo")]) == 1  # as the analysis that applied it does
    assert clock["now"] - start >= timedelta(days=90)
    assert not applies(clock["now"], "Zorbex")  # taught once, 30 days: gone long ago
    assert writer.renew_applied("u1", [("Zorbex", "Zorblax")]) == 0  # an expired fix did not apply: not renewed
    [row] = [c for c in list_corrections(memory.db, "u1", now=clock["now"]) if c["original"] == "Mitnou"]
    assert row["state"] == "applying" and row["frequency"] == 1  # renewed, not counted as taught again


def test_a_reinforcement_racing_a_supersede_becomes_a_new_correction_not_a_503(memory: Runtime) -> None:
    """ "Steffy" finds "Steffi"'s row (cosine 0.957, same final) just before "Steffi" is given another final."""
    import threading

    writer = _writer(memory)
    writer.record(_fix(original="Steffi", final="Cepheid"))
    found, go, outcome = threading.Event(), threading.Event(), {}
    slow = _writer(memory)
    top1 = slow._semantic_top1

    def paused_after_the_twin_is_found(*args: Any) -> Any:
        hit = top1(*args)  # "Steffi"'s row, still active
        found.set()
        go.wait(timeout=30)  # a slow request: the supersede commits meanwhile
        return hit

    slow._semantic_top1 = paused_after_the_twin_is_found  # type: ignore[method-assign]

    def twin() -> None:
        try:
            outcome["result"] = slow.record(_fix(original="Steffy", final="Cepheid"))
        except Exception as exc:  # what used to happen: the point it reinforced was gone (503)
            outcome["error"] = exc

    racer = threading.Thread(target=twin)
    racer.start()
    assert found.wait(timeout=30)
    other_place = _fix(original="Steffi", final="Cepheid Inc", scope=MemoryScope.LIST)  # not a conflict: supersedes
    assert writer.record(other_place).outcome is WriteOutcome.SUPERSEDED
    go.set()
    racer.join(timeout=30)
    assert "error" not in outcome, outcome
    result = outcome["result"]
    assert isinstance(result, WriteResult) and result.outcome is WriteOutcome.NEW
    finals = {c["original"]: c["final"] for c in list_corrections(memory.db, "u1")}
    assert finals == {"Steffi": "Cepheid Inc", "Steffy": "Cepheid"}
