"""What a reviewer's fixes by hand leave and replace, over HTTP on the real stores: the memory counts the heard words
kept as said in the call a pair was taught in (the next call's suggestion carries the count the policy reads), and an
open suggestion a wider fix replaces is a refusal only where the fix writes something else."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.e2e.conftest import AUTH

TAUGHT = [
    "Thanks, line.",
    "The line grew in the quarter.",
    "A new product line for stores.",
    "Over to you, hands.",
    "Now line Cole joins us.",
]


def _post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    r = client.post(path, json=body, headers=AUTH)
    assert r.status_code < 300, r.text
    return r.json()


def _analyse(client: TestClient, tid: str, texts: list[str]) -> list[dict[str, Any]]:
    body = {"transcript_id": tid, "user_id": "ana", "canonical_entities": {"persons": ["Ryan Cole", "Hans Berg"]},
            "segments": [{"id": str(i), "text": t} for i, t in enumerate(texts)]}  # fmt: skip
    return list(_post(client, "/v1/reliability/analyze", body)["suggestions"])


def _fix_by_hand(client: TestClient, tid: str, segment: int, original: str, final: str) -> None:
    text = TAUGHT[segment]
    start = text.index(original)
    _post(client, "/v1/corrections", {"user_id": "ana", "transcript_id": tid, "segment_id": str(segment),
                                      "start_char": start, "end_char": start + len(original), "original": original,
                                      "final": final, "entity_type": "PERSON", "segment_text": text})  # fmt: skip


def test_the_places_a_word_was_heard_and_no_fix_touches_are_counted_left_alone(
    client: TestClient,
) -> None:
    for s in _analyse(client, "t1", TAUGHT):  # what the pipeline proposed is rejected, but where a wider fix goes
        if s["segment_id"] != "4":
            _post(client, f"/v1/suggestions/{s['id']}/reject", {"transcript_id": "t1"})
    _fix_by_hand(client, "t1", 0, "line", "Ryan")  # one "line" of three
    _fix_by_hand(client, "t1", 3, "hands", "Hans")  # the only "hands"
    _fix_by_hand(client, "t1", 4, "line Cole", "Ryan Cole")  # a wider fix over a "line": changed, not left alone

    later = _analyse(client, "t2", ["Thanks, line.", "Over to you, hands."])
    by_heard = {s["original"].casefold(): s for s in later if s["signals"].get("remembered") == 1.0}
    assert by_heard["line"]["final"] == "Ryan" and by_heard["hands"]["final"] == "Hans"
    assert by_heard["line"]["signals"]["remembered_left_alone"] == 2.0
    assert by_heard["hands"]["signals"]["remembered_left_alone"] == 0.0


@pytest.mark.parametrize(("written", "refused"), [("Ryan Cole", False), ("Lionel Cole", True)])
def test_a_suggestion_a_wider_fix_by_hand_replaces_is_refused_only_where_the_fix_disagrees(
    client: TestClient, written: str, refused: bool
) -> None:
    (pending,) = [s for s in _analyse(client, "t1", TAUGHT) if s["segment_id"] == "4"]
    assert (pending["original"], pending["final"]) == ("line", "Ryan")
    _fix_by_hand(client, "t1", 4, "line Cole", written)  # displaces the open "line" → Ryan under it
    pairs = {(r["original"], r["final"]) for r in client.get("/v1/users/ana/refusals", headers=AUTH).json()}
    assert (("line", "Ryan") in pairs) is refused
