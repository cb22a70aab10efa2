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
from namesake.adapters.vectors.base import VectorPoint
from namesake.core.errors import DimensionMismatchError, StoreError
from namesake.core.settings import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.bootstrap import PAYLOAD_INDEXES, CorrectionsMemoryBootstrap
from namesake.corrections_memory.consolidation import WriteOutcome
from namesake.corrections_memory.reader import CorrectionsMemoryReader
from namesake.corrections_memory.repository import active_corrections, list_corrections
from namesake.corrections_memory.unteach import UnteachOutcome, unteach_in
from namesake.corrections_memory.writer import CorrectionsMemoryWriter
from namesake.domain.types import CanonicalDictionary, Disposition, MemoryScope, Segment
from namesake.reliability.pipeline import PipelineInputs, run_stages
from tests.conftest import tuned
from tests.integration.memory_kit import active_rows, candidate, correction, point_count, writer_of


def test_twenty_threads_recording_the_same_correction_leave_one_row_and_one_point(memory: Runtime) -> None:
    writer = writer_of(memory)
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda i: writer.record(correction(source_suggestion_id=f"s{i}")), range(20)))
    assert sorted(r.outcome for r in results).count(WriteOutcome.NEW) == 1
    rows = active_rows(memory)
    assert len(rows) == 1 and rows[0].frequency == 20 and len(rows[0].source_suggestion_ids) == 20
    assert point_count(memory) == 1
    point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [rows[0].qdrant_point_id])[0]
    assert point.payload["frequency"] == 20


def test_the_same_suggestion_accepted_twice_is_a_replay(memory: Runtime) -> None:
    writer = writer_of(memory)
    first = writer.record(correction(source_suggestion_id="sug-1"))
    again = writer.record(correction(source_suggestion_id="sug-1"))
    assert (first.outcome, again.outcome) == (WriteOutcome.NEW, WriteOutcome.REPLAY)
    assert again.frequency == 1 and active_rows(memory)[0].frequency == 1


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
            writer_of(memory).record(correction(original="boom"))
        assert point_count(memory) == 0 and active_rows(memory) == []
    finally:
        with memory.db.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse_boom ON correction_mirror"))


def test_a_commit_that_fails_leaves_the_index_as_it_was(memory: Runtime) -> None:
    """PostgreSQL refuses at COMMIT (a deferred constraint trigger): every index write is undone."""
    writer = writer_of(memory)
    first = writer.record(correction(original="Mitnou", final="MeetNoo", source_suggestion_id="s1"))
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
            correction(original="Zorblax", final="Zorblax Inc"),  # new: its point must go
            correction(original="Mitnou", final="MeetNoo", source_suggestion_id="s2"),  # reinforce: frequency back
            correction(original="Mitnou", final="Meet Now", source_suggestion_id="s3"),  # supersede: old point back
        ):
            with pytest.raises(StoreError, match="commit refused"):
                writer.record(attempt)
        rows = active_rows(memory)
        assert [(r.original, r.final, r.frequency) for r in rows] == [("Mitnou", "MeetNoo", 1)]
        assert point_count(memory) == 1
        point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [first.point_id])[0]
        assert point.payload["frequency"] == 1 and point.payload["final"] == "MeetNoo"
    finally:
        with memory.db.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse_at_commit ON correction_mirror"))


def test_a_new_final_taught_for_another_place_supersedes_the_old_one_and_only_it_is_boosted(memory: Runtime) -> None:
    writer = writer_of(memory)
    writer.record(
        correction(final="MeetNoo", source_suggestion_id="a", scope=MemoryScope.TRANSCRIPT, transcript_id="t1")
    )
    second = writer.record(correction(final="Meetnoo SAS", source_suggestion_id="b"))
    assert second.outcome is WriteOutcome.SUPERSEDED
    with memory.db.session() as s:
        rows = {r.final: r for r in s.scalars(select(CorrectionMirror)).all()}
    assert rows["MeetNoo"].status == "superseded" and rows["Meetnoo SAS"].status == "active"
    assert rows["Meetnoo SAS"].supersedes_id == rows["MeetNoo"].id
    assert point_count(memory) == 1
    cand = candidate("Mitnou", "MeetNoo")
    stats = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings).boost("u1", [cand])
    assert stats.boosted == 1 and cand.final == "Meetnoo SAS" and cand.memory_bonus > 0
    assert [c["final"] for c in list_corrections(memory.db, "u1")] == ["Meetnoo SAS"]


def test_an_address_the_words_do_not_say_is_listed_as_applying_only_where_it_was_taught(memory: Runtime) -> None:
    writer = writer_of(memory)
    writer.record(correction(original="Energous", final="www.enagas.es", source_suggestion_id="a"))
    writer.record(correction(original="yet dot com", final="YETI.com", source_suggestion_id="b"))
    listed = {c["final"]: (c["state"], c["one_off"]) for c in list_corrections(memory.db, "u1")}
    assert listed == {"www.enagas.es": ("applying", True), "YETI.com": ("applying", False)}
    cand = candidate("Energous", "Enagas")
    CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings).boost("u1", [cand])
    assert cand.final == "Enagas"  # the list's reading is not replaced by it


def test_two_finals_taught_for_the_same_words_and_place_are_a_conflict_until_one_is_taught_again(
    memory: Runtime,
) -> None:
    writer = writer_of(memory)
    writer.record(correction(original="COVERT", final="COVID", transcript_id="call-1", source_suggestion_id="a"))
    second = writer.record(
        correction(original="COVERT", final="COVID-19", transcript_id="call-2", source_suggestion_id="b")
    )
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
    third = writer.record(
        correction(original="COVERT", final="COVID", transcript_id="call-3", source_suggestion_id="c")
    )
    assert third.outcome is WriteOutcome.SUPERSEDED
    assert [(c["final"], c["state"]) for c in list_corrections(memory.db, "u1")] == [("COVID", "applying")]
    remembered = active_corrections(memory.db, "u1")
    kept, _ = run_stages(PipelineInputs([seg], CanonicalDictionary(), user_id="u1", remembered=remembered), Settings())
    assert [(c.final, c.disposition) for c in kept] == [("COVID", Disposition.AUTO_APPLIED)]
    # a conflict settled by teaching the same final again: reinforced, applying
    writer.record(correction(original="Mitnou", final="MeetNoo", source_suggestion_id="d"))
    assert writer.record(correction(original="Mitnou", final="Meet Now", source_suggestion_id="e")).outcome is (
        WriteOutcome.CONFLICT
    )
    assert writer.record(correction(original="Mitnou", final="Meet Now", source_suggestion_id="f")).outcome is (
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
    writer = writer_of(memory, reliability_corrections_memory_dedupe_threshold=0.5)
    writer.record(correction(original="trois vélos", final="3 vélos", entity_type="KEYWORD"))
    out = writer.record(correction(original="quatre vélos", final="4 vélos", entity_type="KEYWORD"))
    same = writer.record(correction(original="trois  vélos!", final="3 vélos", entity_type="KEYWORD"))
    assert out.outcome is WriteOutcome.NEW
    assert same.outcome is WriteOutcome.REINFORCED
    assert sorted((r.final, r.frequency) for r in active_rows(memory)) == [("3 vélos", 2), ("4 vélos", 1)]


def test_a_semantic_twin_keeps_the_words_heard_and_they_come_back_until_its_decision_is_taken_back(
    memory: Runtime,
) -> None:
    # the write rule reinforces the nearest fix with the same final (a threshold low enough for these two to be
    # twins); the words heard this time are not lost
    writer = writer_of(memory, reliability_corrections_memory_dedupe_threshold=0.3)
    said = "we paid with annexes cards"
    writer.record(correction(original="any ex", final="Amex", source_suggestion_id="s1"))
    twin = writer.record(correction(original="annexes", final="Amex", source_suggestion_id="s2", action="edit",
                              segment_text=said, start_char=13, end_char=20))  # fmt: skip
    assert twin.outcome is WriteOutcome.REINFORCED and point_count(memory) == 1
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
    writer = writer_of(memory)
    users = [f"user{i:04d}" for i in range(1000)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda u: writer.record(correction(user=u, original="Mitnou", final=f"Meetnoo-{u}")), users))
    assert point_count(memory) == 1000
    reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings)
    for user in [*users[::50], "stranger"]:
        cand = candidate("Mitnou")
        reader.boost(user, [cand])
        assert cand.final == ("?" if user == "stranger" else f"Meetnoo-{user}")


def test_expired_promoted_and_other_model_corrections_are_ignored(memory: Runtime) -> None:
    now = datetime.now(UTC)
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    writer.record(correction(original="Alpha", final="ALPHA Corp"))
    promoted = writer.record(correction(original="Beta", final="BETA Corp"))
    memory.vectors.set_payload(CORRECTIONS_COLLECTION, [promoted.point_id], {"promoted_to_canonical": True})
    vec = memory.embedder.embed(["Gamma"])[0].tolist()
    payload = {
        "user_id": "u1", "entity_type": "ORG", "final": "GAMMA Corp", "frequency": 5, "promoted_to_canonical": 0,
        "quarantine_until": int((now + timedelta(days=9)).timestamp()), "embedding_model": "another-model",
    }  # fmt: skip
    memory.vectors.upsert(CORRECTIONS_COLLECTION, [VectorPoint("00000000-0000-0000-0000-0000000000aa", vec, payload)])
    reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    cands = [candidate("Alpha"), candidate("Beta"), candidate("Gamma")]
    reader.boost("u1", cands)
    assert [c.final for c in cands] == ["ALPHA Corp", "?", "?"]
    later = now + timedelta(days=memory.settings.reliability_corrections_memory_quarantine_days + 1)
    expired = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: later)
    cand = candidate("Alpha")
    assert expired.boost("u1", [cand]).boosted == 0 and cand.final == "?"


def test_a_failing_vector_store_leaves_candidates_unchanged_and_counts(memory: Runtime) -> None:
    writer_of(memory).record(correction())
    memory.vectors.drop_collection(CORRECTIONS_COLLECTION)  # the index is gone: every query fails
    errors: list[int] = []
    reader = CorrectionsMemoryReader(
        memory.vectors, memory.embedder, memory.settings, on_error=lambda: errors.append(1)
    )
    cand = candidate("Mitnou", "X")
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
    writer = writer_of(memory)
    writer.record(correction(user="a"))
    writer.record(correction(user="b"))
    with memory.db.session() as s:
        assert s.scalar(select(func.count()).select_from(CorrectionMirror)) == 2
    assert point_count(memory, "a") == 1


def test_the_exact_path_reads_the_memory_with_the_vector_paths_filters(memory: Runtime) -> None:
    from sqlalchemy import update

    from namesake.adapters.models import CorrectionMirror
    from namesake.corrections_memory.repository import active_corrections

    now = datetime.now(UTC)
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings, clock=lambda: now)
    writer.record(correction(original="Alpha", final="ALPHA Corp", action="manual"))
    writer.record(correction(original="Beta", final="BETA Corp"))
    with memory.db.session() as s:
        beta = update(CorrectionMirror).where(CorrectionMirror.original == "Beta")
        s.execute(beta.values(promoted_to_canonical=True))
    [alpha] = active_corrections(memory.db, "u1", now=now)  # Beta is promoted: canonical vocabulary now
    assert alpha.original == "Alpha" and alpha.action == "manual" and alpha.age_days < 0.01  # how and when taught
    assert 2.9 < active_corrections(memory.db, "u1", now=now + timedelta(days=3))[0].age_days < 3.1
    later = now + timedelta(days=memory.settings.reliability_corrections_memory_quarantine_days + 1)
    assert active_corrections(memory.db, "u1", now=later) == []  # expired, as the vector read says


def test_the_boost_embeds_each_original_once_and_answers_the_same(memory: Runtime) -> None:
    CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings).record(correction())
    embedded: list[str] = []

    class Counting:
        """The runtime's embedder, counting what it is asked to embed."""

        name, version, dim = memory.embedder.name, memory.embedder.version, memory.embedder.dim

        def embed(self, texts: list[str]) -> Any:
            embedded.extend(texts)
            return memory.embedder.embed(texts)

    # as build_embedder composes it: the cache in front of the model
    reader = CorrectionsMemoryReader(memory.vectors, CachedEmbedder(Counting()), memory.settings)
    first = [candidate("Mitnou"), candidate("Mitnou"), candidate("Other")]
    reader.boost("u1", first)
    again = [candidate("Mitnou")]
    reader.boost("u1", again)
    assert sorted(embedded) == ["Mitnou", "Other"]  # once each, across candidates and across runs
    assert first[0].final == first[1].final == again[0].final == "MeetNoo"


def test_the_final_is_cut_at_its_limit_and_the_context_at_its_radius(memory: Runtime) -> None:
    writer = writer_of(memory, reliability_corrections_memory_final_text_max_len=10,
                     reliability_corrections_memory_context_radius=5)  # fmt: skip
    segment = "first words then Mitnou said more words after"
    start = segment.index("Mitnou")
    out = writer.record(correction(final="MeetNoo Incorporated", segment_text=segment, start_char=start,
                             end_char=start + 6, action="manual"))  # fmt: skip
    with memory.db.session() as s:
        row = s.get(CorrectionMirror, out.correction_id)
        assert row is not None
        assert row.final == "MeetNoo In" and row.context_phrase == "then Mitnou said"  # 10 chars; ±5 around
    point = memory.vectors.retrieve(CORRECTIONS_COLLECTION, [out.point_id])[0]
    assert point.payload["final"] == "MeetNoo In" and point.payload["context_phrase"] == "then Mitnou said"
