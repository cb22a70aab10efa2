"""The pipeline service on real PostgreSQL, the embedded Qdrant store and the bundled embedder."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import func, select

from namesake.adapters.models import SuggestionRow
from namesake.adapters.runtime import NOT_LOADED, Runtime
from namesake.adapters.vectors.base import VectorPoint
from namesake.analysis.inputs import TranscriptIn
from namesake.core.errors import ConflictError, InputTooLargeError, InvalidInputError
from namesake.domain.types import SuggestionStatus
from namesake.reliability.canonical import chunk_payloads
from namesake.transcripts.canonical_index import CanonicalListReader
from tests.conftest import analysis_service, retuned

_service = analysis_service


ENTITIES = {"persons": ["Rainer Blair", "Christelle Dupont"], "orgs": ["Cytiva", "Meetnoo"], "acronyms": ["IDT"]}


def _transcript(tid: str = "t1", **kw: object) -> TranscriptIn:
    data = {
        "transcript_id": tid,
        "user_id": "alice",
        "segments": [
            {"id": "1", "text": "Good morning, I am Reiner Blair, welcome."},
            {"id": "2", "text": "Our Cytova unit and IDT grew; Rainer Blair agrees."},
        ],
        "canonical_entities": ENTITIES,
        "reference": "gold fields are ignored",
    }
    data.update(kw)
    return TranscriptIn.model_validate(data)


def test_analyze_indexes_entities_suggests_and_never_touches_right_ones(runtime: Runtime) -> None:
    result = _service(runtime).analyze(_transcript())
    assert result.mode == "RAG_ENHANCED"
    pairs = {(s.segment_id, s.original, s.final) for s in result.suggestions}
    assert ("1", "Reiner", "Rainer") in pairs and ("2", "Cytova", "Cytiva") in pairs
    assert not any(s.original in ("Rainer", "IDT", "Rainer Blair") for s in result.suggestions)
    assert result.stats["gate_hits"] >= 2
    for s in result.suggestions:
        assert s.status in SuggestionStatus.undecided() and 0 <= s.confidence <= 1 and s.signals
    assert runtime.vectors.count("transcript--t1") == len(chunk_payloads("t1", ENTITIES))


def test_reanalysing_never_duplicates_suggestions(runtime: Runtime) -> None:
    service = _service(runtime)
    first = service.analyze(_transcript())
    second = service.analyze(_transcript())
    assert {s.id for s in first.suggestions} == {s.id for s in second.suggestions}
    with runtime.db.session() as s:
        assert s.scalar(select(func.count()).select_from(SuggestionRow)) == len(first.suggestions)


def test_transcript_of_another_user_is_a_conflict(runtime: Runtime) -> None:
    service = _service(runtime)
    service.analyze(_transcript())
    with pytest.raises(ConflictError):
        service.analyze(_transcript(), user_id="mallory")


def test_bad_input_writes_nothing(runtime: Runtime) -> None:
    service = _service(runtime)
    with pytest.raises(InvalidInputError, match=r"canonical_entities\.people"):
        service.analyze(_transcript(canonical_entities={"people": ["X"]}))
    with pytest.raises(InputTooLargeError, match="segments"):
        _service(retuned(runtime, max_segments=1)).analyze(_transcript())
    assert runtime.vectors.list_collections() == []
    with runtime.db.session() as s:
        assert s.scalar(select(func.count()).select_from(SuggestionRow)) == 0


def test_fetch_reads_whole_lists_by_frequency_and_skips_malformed(runtime: Runtime) -> None:
    store, dim = runtime.vectors, runtime.embedder.dim
    store.ensure_collection("transcript--t9", dim)
    vec = [1.0] + [0.0] * (dim - 1)
    payloads = [
        {"persons": ["Ann", "Bob"], "orgs": ["Acme"]},
        {"persons": ["Bob"], "orgs": "not a list"},
        {"persons": ["Bob", 42, "Cy"]},
    ]
    points = [VectorPoint(f"00000000-0000-0000-0000-00000000000{i}", vec, p) for i, p in enumerate(payloads)]
    store.upsert("transcript--t9", points)
    settings = runtime.settings
    d = CanonicalListReader(store, runtime.db, settings).fetch_canonical_entities("t9")
    assert d.lists["persons"] == ["Bob", "Ann", "Cy"]  # Bob in 3 chunks, Ann first-seen before Cy; nothing cut
    assert d.lists["orgs"] == ["Acme"]
    assert d.malformed == 2
    empty = CanonicalListReader(store, runtime.db, settings).fetch_canonical_entities("nothing-here")
    assert empty.mode.value == "CONTEXT_FREE"


def test_shared_layout_keeps_transcripts_apart_in_one_collection(runtime: Runtime) -> None:
    rt = retuned(runtime, canonical_layout="shared")
    service = _service(rt)
    service.index_entities("ta", None, {"orgs": ["Cytiva"]})
    service.index_entities("tb", None, {"orgs": ["Danaher"]})
    assert runtime.vectors.list_collections() == ["canonical_entities"]
    enricher = CanonicalListReader(runtime.vectors, runtime.db, rt.settings)
    assert enricher.fetch_canonical_entities("ta").lists == {"orgs": ["Cytiva"]}
    assert enricher.fetch_canonical_entities("tb").lists == {"orgs": ["Danaher"]}
    service.index_entities("ta", None, {"orgs": ["Beckman"]})  # re-indexing replaces, never accumulates
    assert enricher.fetch_canonical_entities("ta").lists == {"orgs": ["Beckman"]}


def test_a_transcripts_own_collection_is_made_once_and_its_list_replaced_when_indexed_again(runtime: Runtime) -> None:
    service = _service(runtime)
    service.index_entities("tc", None, {"orgs": ["Cytiva"], "persons": ["Rainer Blair"]})  # made: nothing to delete
    service.index_entities("tc", None, {"orgs": ["Beckman"]})  # there: the old chunks deleted, the new one written
    assert service.stores.lists.fetch_canonical_entities("tc").lists == {"orgs": ["Beckman"]}


def test_analyze_many_in_workers_matches_one_by_one_and_keeps_memory_users_local(runtime: Runtime) -> None:
    from namesake.corrections_memory.bootstrap import CorrectionsMemoryBootstrap
    from namesake.corrections_memory.reader import CorrectionsMemoryReader
    from namesake.corrections_memory.writer import CorrectionInput, CorrectionsMemoryWriter

    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, runtime.settings).ensure_collection()
    writer = CorrectionsMemoryWriter(runtime.db, runtime.vectors, runtime.embedder, runtime.settings)
    writer.record(CorrectionInput(user_id="bob", entity_type="ORG", original="Zorblax", final="Meetnoo"))
    service = _service(runtime, CorrectionsMemoryReader(runtime.vectors, runtime.embedder, runtime.settings))
    batch = [
        _transcript(f"m{i}", user_id="bob" if i == 2 else "alice",
                    segments=[{"id": "1", "text": "Reiner Blair met Zorblax and the Cytova team."}])
        for i in range(4)
    ]  # fmt: skip
    assert [service.needs_ports(service.prepare(t)) for t in batch] == [False, False, True, False]

    def view(results: list) -> list:  # type: ignore[type-arg]
        return [(r.transcript_id, [(s.original, s.final, s.status, s.confidence) for s in r.suggestions])
                for r in results]  # fmt: skip

    one_by_one = view([service.analyze(t) for t in batch])
    parallel = view(list(service.analyze_many(batch, workers=2)))
    assert parallel == one_by_one
    assert [tid for tid, _ in parallel] == ["m0", "m1", "m2", "m3"]
    bob = dict(parallel)["m2"]
    assert ("Zorblax", "Meetnoo") in {(o, f) for o, f, _, _ in bob}  # the memory ran, in this process
    assert ("Zorblax", "Meetnoo") not in {(o, f) for o, f, _, _ in dict(parallel)["m0"]}


def test_a_stage_pool_starts_its_workers_when_made_and_serves_analyze_many(runtime: Runtime) -> None:
    import multiprocessing

    from namesake.analysis.pool import StagePool

    before = len(multiprocessing.active_children())
    batch = [_transcript(f"p{i}") for i in range(3)]
    service = _service(runtime)
    one_by_one = [[(s.original, s.final, s.confidence) for s in service.analyze(t).suggestions] for t in batch]
    with StagePool(runtime.settings, 2) as pool:
        # started (forked once the fork server has loaded the stages) before any transcript is given: `namesake
        # analyze` opens the stores meanwhile, not waiting for them
        deadline = time.monotonic() + 60
        while len(multiprocessing.active_children()) < before + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(multiprocessing.active_children()) == before + 2
        results = list(service.analyze_many(batch, pool=pool))
    assert [[(s.original, s.final, s.confidence) for s in r.suggestions] for r in results] == one_by_one
    assert len(multiprocessing.active_children()) == before


def test_a_chapter_sized_list_is_read_whole_across_scroll_pages(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    import namesake.transcripts.canonical_index as index

    monkeypatch.setattr(index, "SCROLL_PAGE", 4)  # 30 chunks: eight pages
    words = [f"word{i:04d}" for i in range(3000)]
    service = _service(runtime)
    assert service.index_entities("chapter", None, {"keywords": words}) == 30
    d = service.stores.lists.fetch_canonical_entities("chapter")
    assert d.lists["keywords"] == words  # every entry the spotter may match, in list order


def test_entities_indexed_before_the_prefix_are_still_read_and_erased(runtime: Runtime) -> None:
    from namesake.jobs import Jobs, RuntimeJobWork
    from namesake.reliability.canonical import chunk_point_id

    store, dim = runtime.vectors, runtime.embedder.dim
    store.ensure_collection("legacy-t", dim)  # how an earlier version named a transcript's collection
    payload = {**{n: [] for n in ("persons", "places", "acronyms", "keywords")}, "orgs": ["Cytiva"],
               "transcript_id": "legacy-t", "text": "Cytiva", "chunk": 0}  # fmt: skip
    store.upsert("legacy-t", [VectorPoint(chunk_point_id("legacy-t", 0), [1.0] + [0.0] * (dim - 1), payload)])
    service = _service(runtime)
    assert service.stores.lists.fetch_canonical_entities("legacy-t").lists == {"orgs": ["Cytiva"]}
    service.stores.transcripts.register("legacy-t", "legacy-user")
    receipt = Jobs(RuntimeJobWork(runtime)).erase_user("legacy-user")
    assert receipt.deleted["collections"] == 1 and not store.collection_exists("legacy-t")


def test_no_transcript_id_reaches_another_transcripts_collection(runtime: Runtime) -> None:
    from namesake.jobs import Jobs, RuntimeJobWork
    from namesake.transcripts.canonical_index import collection_for
    from namesake.transcripts.retention import delete_transcript

    service = _service(runtime)
    service.analyze(_transcript("t1", user_id="alice"))  # t1's list lives in "transcript--t1"
    owned = collection_for("t1", runtime.settings)
    hashed = collection_for("acme~t2", runtime.settings)
    service.index_entities("acme~t2", "acme~bob", {"orgs": ["Acme"]})  # a tenant's: its collection name is hashed
    for lookalike in (owned, hashed):  # an id spelled like another transcript's collection name
        result = service.analyze(_transcript(lookalike, user_id="mallory", canonical_entities=None))
        assert result.mode == "CONTEXT_FREE" and result.suggestions == []
        delete_transcript(runtime.db, runtime.vectors, runtime.settings, lookalike)
    Jobs(RuntimeJobWork(runtime)).erase_user("mallory")
    assert runtime.vectors.collection_exists(owned) and runtime.vectors.collection_exists(hashed)
    assert service.stores.lists.fetch_canonical_entities("t1").lists == ENTITIES


def _orphans(rt: Runtime) -> tuple[int, list[str]]:
    """Points of no mirror row, and transcript collections of no transcript row."""
    from namesake.adapters.models import CorrectionMirror, Transcript
    from namesake.core.settings import CORRECTIONS_COLLECTION
    from namesake.transcripts.canonical_index import collection_for

    with rt.db.session() as s:
        owned = {collection_for(t, rt.settings) for t in s.scalars(select(Transcript.id))}
        mirrored = {str(p) for p in s.scalars(select(CorrectionMirror.qdrant_point_id))}
    points, offset = [], None
    while True:
        page, offset = rt.vectors.scroll(CORRECTIONS_COLLECTION, limit=256, offset=offset)
        points += [str(p.id) for p in page]
        if offset is None:
            break
    stray = [c for c in rt.vectors.list_collections() if c != CORRECTIONS_COLLECTION and c not in owned]
    return len(set(points) - mirrored), stray


def test_erasure_wins_every_race_with_the_users_writes(runtime: Runtime) -> None:
    """Analyses and corrections for one user, 4 at a time, while the user is erased: nothing comes back."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from namesake.adapters.models import User
    from namesake.app.services import build_services
    from namesake.core.errors import NamesakeError
    from namesake.corrections_memory.writer import CorrectionInput

    services = build_services(runtime)
    refused: list[str] = []
    for round_ in range(4):
        user, erased = f"racer{round_}", threading.Event()  # set when the erasure starts

        def write(i: int, user: str = user, erased: threading.Event = erased) -> None:
            try:
                if i % 2:
                    services.analysis.analyze(_transcript(f"{user}-t{i}", user_id=user))
                else:
                    fix = CorrectionInput(user_id=user, entity_type="ORG", original=f"Zorb{i}", final=f"Zorblax{i}")
                    services.writer.record(fix)
            except NamesakeError as exc:  # the race lost: said clearly, never a server error
                assert exc.code in ("USER_ERASED", "CONFLICT"), exc.message
                assert erased.is_set() or exc.code == "CONFLICT"
                refused.append(exc.code)

        with ThreadPoolExecutor(4) as pool:
            jobs = [pool.submit(write, i) for i in range(12)]
            erased.set()  # from here on a write may be refused
            receipt = services.jobs.erase_user(user)  # while writes are in flight
            jobs += [pool.submit(write, i) for i in range(12, 16)]  # and some after
            for job in jobs:
                job.result()
        assert receipt.remaining == {"qdrant_points": 0, "rows": 0}
        with runtime.db.session() as s:
            assert s.get(User, user) is None  # not resurrected by a write that was already under way
    points, collections = _orphans(runtime)
    assert points == 0 and collections == []
    assert refused.count("USER_ERASED") >= 4  # the late writes were refused, not silently dropped


def test_a_read_racing_a_transcript_delete_finds_no_list_rather_than_failing(runtime: Runtime) -> None:
    import dataclasses

    from namesake.transcripts.canonical_index import collection_for

    service = _service(runtime)
    service.index_entities("t-gone", None, {"orgs": ["Cytiva"]})
    store = runtime.vectors

    class DeletedMeanwhile:
        """The real store; the transcript's collection is dropped once seen to exist, before it is read."""

        def __getattr__(self, name: str) -> object:
            return getattr(store, name)

        def scroll(self, name: str, **kw: Any) -> object:
            store.drop_collection(name)
            return store.scroll(name, **kw)

    racing = _service(dataclasses.replace(runtime, vectors=DeletedMeanwhile()))  # type: ignore[arg-type]
    assert racing.stores.lists.fetch_canonical_entities("t-gone").lists == {}
    assert not store.collection_exists(collection_for("t-gone", runtime.settings))


def test_a_run_that_reads_no_window_never_loads_the_language_model(settings: Any, make_runtime: Any) -> None:
    rt = make_runtime(settings)
    rt.preloaded_language_model = NOT_LOADED  # as a fresh process has it
    service = _service(rt)
    said = {"id": "1", "text": "Thanks to the Cytova team and to Meetnu."}
    rare = service.analyze(_transcript("rare", segments=[said]))  # rare words heard for rare names: nothing to read
    assert rare.suggestions and rare.stats["language_model"]["read"] == 0
    assert rt.preloaded_language_model is NOT_LOADED
    heard = {"id": "1", "text": "Thanks, Crystal, and welcome to the call."}  # an everyday word for a listed name
    read = service.analyze(_transcript("everyday", segments=[heard]))
    assert read.stats["language_model"]["read"] > 0 and rt.preloaded_language_model is not NOT_LOADED
