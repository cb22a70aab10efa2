"""A server with its stages in a child process answers what one without answers, the memory's boost included."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned
from tests.e2e.conftest import AUTH, KEY
from tests.e2e.test_undo_and_groups import ENTITIES

TEXT = [
    "Good morning, this is Reiner Blair with the results.",
    "Our Cytova unit grew, and Backman Coulter too, said our sales teams.",
    "Cytova margins held while Cytova orders rose.",
]


def _analyze(client: TestClient, tid: str, user: str) -> list[dict[str, Any]]:
    r = client.put(f"/v1/transcripts/{tid}/canonical-entities", json={**ENTITIES, "user_id": user}, headers=AUTH)
    assert r.status_code == 200, r.text
    body = {"transcript_id": tid, "user_id": user, "segments": [{"id": str(i), "text": t} for i, t in enumerate(TEXT)]}
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    return list(r.json()["suggestions"])


def _seen(suggestions: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(s["original"], s["final"], s["status"], round(s["confidence"], 6)) for s in suggestions]


def _taught_then_again(client: TestClient, user: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One call analysed, its Cytova fixes accepted, a second call analysed: both answers."""
    first = _analyze(client, f"{user}-1", user)
    ids = [s["id"] for s in first if s["original"] == "Cytova"]
    decide = {"action": "accept", "suggestion_ids": ids}
    assert client.post(f"/v1/transcripts/{user}-1/decisions", json=decide, headers=AUTH).status_code == 200
    return first, _analyze(client, f"{user}-2", user)


def test_the_stage_process_answers_as_the_server_itself_and_boosts_with_the_users_memory(
    settings: Settings, make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    answers = {}
    for in_child, user in ((False, "here"), (True, "child")):
        s = tuned(settings, namesake_api_keys=[KEY], analysis_stage_process=in_child, namesake_data_dir=tmp_path / user)
        with TestClient(create_app(s, make_runtime(s))) as client:
            stages = client.app.state.services.analysis.stages  # type: ignore[attr-defined]
            assert (stages is not None) is in_child
            answers[in_child] = _taught_then_again(client, user)
            remembered = [x for x in answers[in_child][1] if x["signals"].get("remembered", 0) > 0]
            assert remembered and all(x["status"] == "auto_applied" for x in remembered)
    assert [_seen(a) for a in answers[True]] == [_seen(a) for a in answers[False]]


def test_a_stage_process_killed_mid_analysis_answers_503_worker_and_the_next_analysis_runs_in_a_new_one(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    s = tuned(settings, namesake_api_keys=[KEY], analysis_stage_process=True)
    line = "Reiner Blair said our sales teams met Cytova and Backman Coulter buyers in the west region this quarter. "
    long_body = {"transcript_id": "long-1", "user_id": "alice", "canonical_entities": ENTITIES,
                 "segments": [{"id": str(i), "text": line * 12} for i in range(400)]}  # fmt: skip
    with TestClient(create_app(s, make_runtime(s))) as client:
        stages = client.app.state.services.analysis.stages  # type: ignore[attr-defined]
        pid = stages._child.process.pid
        threading.Timer(1.5, lambda: os.kill(pid, signal.SIGKILL)).start()
        r = client.post("/v1/reliability/analyze", json=long_body, headers=AUTH)
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "WORKER" and "retry" in r.json()["error"]["message"]
        assert _analyze(client, "after-1", "alice")
        assert stages._child.process.pid != pid
        listed = [t["transcript_id"] for t in client.get("/v1/transcripts", headers=AUTH).json()]
        assert "long-1" not in listed, listed  # nothing of the failed analysis is kept
