"""A runtime closes with nothing of its own still running: a process exits cleanly whatever it did."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from namesake.adapters.db import Database
from namesake.adapters.embeddings import UniversalSentenceEncoder
from namesake.adapters.runtime import open_runtime
from namesake.app.services import build_services
from namesake.core.errors import StoreInUseError
from namesake.core.settings import Settings


def _loading() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "use-load" and t.is_alive()]


@pytest.fixture
def slow_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoder's weights as a loaded machine reads them (a second): a command is over before they are."""
    load = UniversalSentenceEncoder._load

    def slow(self: UniversalSentenceEncoder) -> object:
        time.sleep(1.0)
        return load(self)

    monkeypatch.setattr(UniversalSentenceEncoder, "_load", slow)


@pytest.mark.usefixtures("slow_weights")
def test_closing_a_runtime_waits_for_the_encoder_weights_it_started_loading(settings: Settings) -> None:
    # a command that never embeds (an erasure, an export) closes right after opening: the load it started
    # meanwhile must be over by then, or the interpreter aborts at exit under it (exit 134)
    open_runtime(settings).close()
    assert _loading() == []


@pytest.mark.usefixtures("slow_weights")
def test_a_store_held_by_a_server_is_refused_with_nothing_left_loading(settings: Settings) -> None:
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    ready, done = spawn.Event(), spawn.Event()
    holder = spawn.Process(target=_hold, args=(Path(settings.namesake_data_dir), ready, done))
    holder.start()
    try:
        assert ready.wait(120)
        runtime = open_runtime(settings)
        try:
            with pytest.raises(StoreInUseError):
                build_services(runtime)  # the corrections memory's shard: held by the other process
        finally:
            runtime.close()
        assert _loading() == []
    finally:
        done.set()
        holder.join(30)


def _hold(data: Path, ready: Any, done: Any) -> None:
    """Another process with the memory's shard open, as `namesake serve` has it."""
    from namesake.adapters.vectors import open_vector_store
    from namesake.core.settings import CORRECTIONS_COLLECTION

    vectors = open_vector_store(Settings(namesake_data_dir=data))
    vectors.ensure_collection(CORRECTIONS_COLLECTION, 512)
    ready.set()
    done.wait(120)
    vectors.close()


def test_an_idle_databases_pool_closes_its_connections_and_the_next_query_opens_one(db: Database) -> None:
    """The idle give-back closes the pool's connections (their buffers go with them); nothing is lost for the next."""
    db.ping(hold_seconds=0.01)
    assert db.engine.pool.checkedin() >= 1
    db.release_idle()
    assert db.engine.pool.checkedin() == 0
    db.ping()
    assert db.engine.pool.checkedin() == 1
