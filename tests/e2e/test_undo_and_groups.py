"""Undo and decide-once-for-every-occurrence, over HTTP on the real stores: what the memory keeps is the truth."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.core.settings import CORRECTIONS_COLLECTION, Settings
from tests.conftest import MakeRuntime, tuned
from tests.e2e.conftest import AUTH, KEY

ENTITIES = {"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Beckman Coulter"]}
TEXT = [
    "Good morning, this is Reiner Blair with the results.",
    "Our Cytova unit grew, and Backman Coulter too.",
    "Cytova margins held while Cytova orders rose.",
    "We thank the Cytova team.",
]


def _analyze(client: TestClient, tid: str, user: str = "alice") -> list[dict[str, Any]]:
    r = client.put(f"/v1/transcripts/{tid}/canonical-entities", json={**ENTITIES, "user_id": user}, headers=AUTH)
    assert r.status_code == 200, r.text
    body = {"transcript_id": tid, "user_id": user, "segments": [{"id": str(i), "text": t} for i, t in enumerate(TEXT)]}
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    return list(r.json()["suggestions"])


def _one(suggestions: list[dict[str, Any]], original: str) -> dict[str, Any]:
    return next(s for s in suggestions if s["original"] == original)


def _memory(client: TestClient, user: str = "alice") -> dict[str, int]:
    return {f"{c['original']}→{c['final']}": c["frequency"]
            for c in client.get(f"/v1/users/{user}/corrections", headers=AUTH).json()}  # fmt: skip


def _points(client: TestClient) -> int:
    return int(client.app.state.services.runtime.vectors.count(CORRECTIONS_COLLECTION))  # type: ignore[attr-defined]


def _post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body, headers=AUTH)


def test_undo_puts_a_suggestion_back_as_proposed_and_takes_back_what_it_taught(client: TestClient) -> None:
    reiner = _one(_analyze(client, "u-1"), "Reiner")
    points = _points(client)
    edited = _post(client, f"/v1/suggestions/{reiner['id']}/edit", {"transcript_id": "u-1", "final": "Rainer B."})
    assert edited.status_code == 200 and _memory(client) == {"Reiner→Rainer B.": 1} and _points(client) == points + 1
    undone = _post(client, f"/v1/suggestions/{reiner['id']}/reopen", {"transcript_id": "u-1"})
    assert undone.status_code == 200, undone.text
    back = undone.json()["suggestions"][0]
    assert (back["status"], back["final"]) == (reiner["status"], reiner["final"])  # as the pipeline left it
    assert undone.json()["memory"] == ["untaught"] and _memory(client) == {} and _points(client) == points
    again = _post(client, f"/v1/suggestions/{reiner['id']}/reopen", {"transcript_id": "u-1"})
    assert again.status_code == 200 and again.json()["memory"] == []  # nothing left to undo: a no-op
    accepted = _post(client, f"/v1/suggestions/{reiner['id']}/accept", {"transcript_id": "u-1"})
    assert accepted.json()["memory"] == "new" and _memory(client) == {"Reiner→Rainer": 1}  # decided anew, counted once


def test_undo_of_one_of_two_teachings_leaves_one_and_of_a_replaced_one_is_409(client: TestClient) -> None:
    first, second = _one(_analyze(client, "u-2"), "Reiner"), _one(_analyze(client, "u-3"), "Reiner")
    _post(client, f"/v1/suggestions/{first['id']}/accept", {"transcript_id": "u-2"})
    _post(client, f"/v1/suggestions/{second['id']}/accept", {"transcript_id": "u-3"})
    assert _memory(client) == {"Reiner→Rainer": 2}
    r = _post(client, f"/v1/suggestions/{second['id']}/reopen", {"transcript_id": "u-3"})
    assert r.json()["memory"] == ["reduced"] and _memory(client) == {"Reiner→Rainer": 1}
    # a newer decision replaces what u-2 taught: undoing u-2 now would undo it, so it is refused, named
    _post(client, f"/v1/suggestions/{second['id']}/edit", {"transcript_id": "u-3", "final": "Rainer Blair"})
    assert _memory(client) == {"Reiner→Rainer Blair": 1}
    refused = _post(client, f"/v1/suggestions/{first['id']}/reopen", {"transcript_id": "u-2"})
    assert refused.status_code == 409 and "Reiner → Rainer" in refused.json()["error"]["message"]
    assert _one(client.get("/v1/transcripts/u-2/suggestions", headers=AUTH).json(), "Reiner")["status"] == "validated"
    # undoing the newer one brings the one it replaced back, in the index too
    r = _post(client, f"/v1/suggestions/{second['id']}/reopen", {"transcript_id": "u-3"})
    assert r.json()["memory"] == ["restored"] and _memory(client) == {"Reiner→Rainer": 1}
    again = _one(_analyze(client, "u-4"), "Reiner")
    assert again["signals"].get("memory_bonus", 0) > 0 and again["final"] == "Rainer"


def test_one_decision_for_every_occurrence_is_remembered_once_and_undone_at_once(client: TestClient) -> None:
    suggestions = _analyze(client, "g-1")
    cytova = [s for s in suggestions if s["original"] == "Cytova"]
    assert len(cytova) == 4 and len({s["final"] for s in cytova}) == 1
    ids = [s["id"] for s in cytova]
    r = _post(client, "/v1/transcripts/g-1/decisions", {"action": "accept", "suggestion_ids": ids})
    assert r.status_code == 200, r.text
    assert r.json()["memory"] == "new" and {s["status"] for s in r.json()["suggestions"]} == {"validated"}
    assert _memory(client) == {"Cytova→Cytiva": 1}  # four occurrences, one teaching
    one = _post(client, f"/v1/suggestions/{ids[0]}/reopen", {"transcript_id": "g-1"})
    assert one.json()["memory"] == [] and _memory(client) == {"Cytova→Cytiva": 1}  # the others still stand by it
    rest = _post(client, "/v1/transcripts/g-1/reopen", {"suggestion_ids": ids})
    assert rest.json()["memory"] == ["untaught"] and _memory(client) == {}
    assert [s["status"] for s in rest.json()["suggestions"]] == [s["status"] for s in cytova]
    edit = {"action": "edit", "suggestion_ids": ids, "final": "Cytiva plc"}
    r = _post(client, "/v1/transcripts/g-1/decisions", edit)
    assert {s["final"] for s in r.json()["suggestions"]} == {"Cytiva plc"} and _memory(client) == {
        "Cytova→Cytiva plc": 1
    }


def test_a_group_decision_is_for_one_pair_and_all_or_nothing(client: TestClient) -> None:
    suggestions = _analyze(client, "g-2")
    cytova, reiner = _one(suggestions, "Cytova"), _one(suggestions, "Reiner")
    both = [cytova["id"], reiner["id"]]
    mixed = _post(client, "/v1/transcripts/g-2/decisions", {"action": "accept", "suggestion_ids": both})
    assert mixed.status_code == 422 and mixed.json()["error"]["field"] == "suggestion_ids"
    empty = _post(client, "/v1/transcripts/g-2/decisions", {"action": "accept", "suggestion_ids": []})
    assert empty.status_code == 422 and empty.json()["error"]["field"] == "suggestion_ids"
    nobody = "00000000-0000-0000-0000-000000000000"
    unknown = _post(
        client, "/v1/transcripts/g-2/decisions", {"action": "reject", "suggestion_ids": [cytova["id"], nobody]}
    )
    assert unknown.status_code == 404 and "00000000" in unknown.json()["error"]["message"]
    no_final = _post(client, "/v1/transcripts/g-2/decisions", {"action": "edit", "suggestion_ids": [cytova["id"]]})
    assert no_final.status_code == 422 and no_final.json()["error"]["field"] == "final"
    rejected = _post(client, "/v1/transcripts/g-2/decisions", {"action": "reject", "suggestion_ids": both})
    assert {s["status"] for s in rejected.json()["suggestions"]} == {"rejected"}  # a reject takes any pairs
    assert _post(client, f"/v1/suggestions/{reiner['id']}/reopen", {"transcript_id": "g-2"}).status_code == 200
    others = [s["id"] for s in suggestions if s["original"] == "Cytova"]
    r = _post(client, "/v1/transcripts/g-2/decisions", {"action": "accept", "suggestion_ids": others})
    assert r.status_code == 409  # one of them was rejected: none is accepted
    assert _memory(client) == {}
    statuses = {s["id"]: s["status"] for s in client.get("/v1/transcripts/g-2/suggestions", headers=AUTH).json()}
    assert [statuses[i] for i in others[1:]] == [s["status"] for s in suggestions if s["id"] in others[1:]]


def test_undoing_a_refusal_lets_the_pair_come_back(client: TestClient) -> None:
    backman = _one(_analyze(client, "r-1"), "Backman")
    _post(client, f"/v1/suggestions/{backman['id']}/reject", {"transcript_id": "r-1"})
    assert not [s for s in _analyze(client, "r-2") if s["original"] == "Backman"]  # refused: never proposed again
    _post(client, f"/v1/suggestions/{backman['id']}/reopen", {"transcript_id": "r-1"})
    assert _one(_analyze(client, "r-3"), "Backman")["final"] == backman["final"]


def test_a_fix_by_hand_over_a_suggestion_replaces_it_and_its_undo_brings_it_back(client: TestClient) -> None:
    backman = _one(_analyze(client, "m-1"), "Backman")
    seg = TEXT[1]
    start = seg.index("Backman")
    fix = {"user_id": "alice", "transcript_id": "m-1", "segment_id": "1", "start_char": start,
           "end_char": start + len("Backman Coulter"), "original": "Backman Coulter", "final": "Beckman Coulter Inc",
           "entity_type": "ORG", "segment_text": seg}  # fmt: skip
    made = _post(client, "/v1/corrections", fix)
    assert made.status_code == 201, made.text
    rows = {s["id"]: s for s in client.get("/v1/transcripts/m-1/suggestions", headers=AUTH).json()}
    assert rows[backman["id"]]["status"] == "rejected"  # replaced by the fix, not drawn under it
    assert _memory(client) == {"Backman Coulter→Beckman Coulter Inc": 1}
    fixed_id = made.json()["suggestion"]["id"]
    undone = _post(client, f"/v1/suggestions/{fixed_id}/reopen", {"transcript_id": "m-1"})
    assert undone.status_code == 200 and undone.json()["removed"] == [fixed_id] and _memory(client) == {}
    rows = {s["id"]: s for s in client.get("/v1/transcripts/m-1/suggestions", headers=AUTH).json()}
    assert fixed_id not in rows and rows[backman["id"]]["status"] == backman["status"]
    # an accepted suggestion under the words is the reviewer's own: undo it first
    _post(client, f"/v1/suggestions/{backman['id']}/accept", {"transcript_id": "m-1"})
    refused = _post(client, "/v1/corrections", fix)
    assert refused.status_code == 409 and "undo it first" in refused.json()["error"]["message"]
    assert _memory(client) == {f"Backman→{backman['final']}": 1}


def test_the_history_lists_each_decision_as_taken_and_what_undo_took_back(client: TestClient) -> None:
    made = _analyze(client, "h-1")
    cytova = [s["id"] for s in made if s["original"] == "Cytova"]
    r = _post(client, "/v1/transcripts/h-1/decisions", {"action": "accept", "suggestion_ids": cytova, "scope": "list"})
    assert r.status_code == 200 and r.json()["scope"] == "list"
    reiner = _one(made, "Reiner")["id"]
    _post(client, "/v1/transcripts/h-1/decisions", {"action": "reject", "suggestion_ids": [reiner]})
    _post(client, "/v1/transcripts/h-1/reopen", {"suggestion_ids": [reiner]})
    history = client.get("/v1/transcripts/h-1/history", headers=AUTH).json()
    assert [(h["action"], h["label"], h["scope"], h["undone_at"] is not None) for h in history] == [
        ("reject", "Reiner → Rainer", None, True),
        ("accept", f"Cytova → Cytiva ({len(cytova)}×)", "list", False),
    ]
    taught = client.get("/v1/users/alice/corrections", headers=AUTH).json()
    assert [(c["original"], c["scope"]) for c in taught] == [("Cytova", "list")]
    assert client.get("/v1/transcripts/nope/history", headers=AUTH).status_code == 404


def test_the_queue_counts_what_is_left_to_decide_and_progress_counts_transcripts_with_nothing_left(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    s = tuned(settings, namesake_api_keys=[KEY], reliability_auto_apply_threshold=0.99)  # everything waits for review
    with TestClient(create_app(s, make_runtime(s))) as client:
        for tid in ("q-1", "q-2"):
            _analyze(client, tid)
        queue = {t["transcript_id"]: t["counts"] for t in client.get("/v1/transcripts", headers=AUTH).json()}
        assert all(0 < c["to_decide"] <= c["pending"] for c in queue.values()), queue
        progress = client.get("/v1/review/progress", headers=AUTH).json()
        assert progress == {"transcripts": 2, "reviewed": 0, "to_review": 2}
        pending = [x["id"] for x in client.get("/v1/transcripts/q-1/suggestions", headers=AUTH).json()
                   if x["status"] == "pending"]  # fmt: skip
        r = _post(client, "/v1/transcripts/q-1/decisions", {"action": "reject", "suggestion_ids": pending})
        assert r.status_code == 200
        assert client.get("/v1/review/progress?user_id=alice", headers=AUTH).json()["reviewed"] == 1
        assert client.get("/v1/review/progress?user_id=bob", headers=AUTH).json()["transcripts"] == 0


def test_a_transcript_whose_only_pending_suggestions_are_folded_is_not_reviewed_yet(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    s = tuned(settings, namesake_api_keys=[KEY], reliability_auto_apply_threshold=0.99, review_fold_below=0.99)
    with TestClient(create_app(s, make_runtime(s))) as client:
        _analyze(client, "f-1")
        [counts] = [t["counts"] for t in client.get("/v1/transcripts", headers=AUTH).json()]
        assert counts["to_decide"] == 0 < counts["pending"]  # every pending one folded: the badge says so
        assert client.get("/v1/review/progress", headers=AUTH).json() == {"transcripts": 1, "reviewed": 0,
                                                                          "to_review": 1}  # fmt: skip
        pending = [x["id"] for x in client.get("/v1/transcripts/f-1/suggestions", headers=AUTH).json()
                   if x["status"] == "pending"]  # fmt: skip
        assert (
            _post(client, "/v1/transcripts/f-1/decisions", {"action": "reject", "suggestion_ids": pending}).status_code
            == 200
        )
        assert client.get("/v1/review/progress", headers=AUTH).json()["reviewed"] == 1


def test_the_default_scope_is_narrow_for_everyday_words_and_bad_input_writes_nothing(client: TestClient) -> None:
    _analyze(client, "s-1")
    ask = lambda original, final: client.get(  # noqa: E731
        "/v1/review/scope", params={"original": original, "final": final, "transcript_id": "s-1"}, headers=AUTH
    )
    assert ask("three", "III").json() == {"scope": "list", "everyday": True}
    assert ask("Reiner", "Rainer").json() == {"scope": "user", "everyday": False}
    assert ask("three", "III").status_code == 200 and ask("", "III").status_code == 422
    fix = {"user_id": "alice", "transcript_id": "s-1", "segment_id": "2", "start_char": 0, "end_char": 6,
           "original": "Cytova", "final": "Cytiva", "entity_type": "ORG", "segment_text": TEXT[2],
           "also": [{"segment_id": "3", "start_char": 0, "end_char": 2}]}  # fmt: skip
    r = _post(client, "/v1/corrections", fix)
    assert (
        r.status_code == 422 and r.json()["error"]["field"] == "also" and "not 'Cytova'" in r.json()["error"]["message"]
    )
    bad_scope = _post(client, "/v1/corrections", {**fix, "also": [], "scope": "everywhere"})
    assert bad_scope.status_code == 422 and "scope" in bad_scope.text
    assert client.get("/v1/users/alice/corrections", headers=AUTH).json() == []
    assert client.get("/v1/transcripts/s-1/history", headers=AUTH).json() == []
    at = TEXT[2].index("Cytova", 1)
    good = {**fix, "also": [{"segment_id": "2", "start_char": at, "end_char": at + 6}, {"segment_id": "3",
            "start_char": TEXT[3].index("Cytova"), "end_char": TEXT[3].index("Cytova") + 6}]}  # fmt: skip
    r = _post(client, "/v1/corrections", good)
    assert r.status_code == 201, r.text
    assert (r.json()["scope"], len(r.json()["also"])) == ("user", 2)


def test_an_analysis_that_applies_a_taught_fix_by_itself_renews_it(client: TestClient) -> None:
    made = _analyze(client, "r-1")
    cytova = [s["id"] for s in made if s["original"] == "Cytova"]
    assert (
        _post(client, "/v1/transcripts/r-1/decisions", {"action": "accept", "suggestion_ids": cytova}).status_code
        == 200
    )
    [before] = client.get("/v1/users/alice/corrections", headers=AUTH).json()
    again = _analyze(client, "r-2")
    applied = [s for s in again if s["original"] == "Cytova" and s["status"] == "auto_applied"]
    assert applied and all(s["signals"].get("remembered", 0) > 0 for s in applied)
    [after] = client.get("/v1/users/alice/corrections", headers=AUTH).json()
    assert datetime.fromisoformat(after["applies_until"]) > datetime.fromisoformat(before["applies_until"])
    assert after["frequency"] == before["frequency"]  # renewed, not taught again


def test_reach_says_where_a_change_stands_here_and_in_the_users_other_calls_before_anything_is_decided(
    client: TestClient,
) -> None:
    here = _analyze(client, "reach-1")
    _analyze(client, "reach-2")
    _analyze(client, "reach-3")
    _analyze(client, "bob-1", user="bob")  # another user's call is never counted
    cytova = _one(here, "Cytova")
    ask = {"transcript_id": "reach-1", "pairs": [{"original": "cytova", "final": cytova["final"]},
                                                 {"original": "Zorblax", "final": "Cytiva"}]}  # fmt: skip
    r = _post(client, "/v1/review/reach", ask)
    assert r.status_code == 200, r.text
    got = r.json()
    places = sum(1 for s in here if s["original"] == "Cytova" and s["final"] == cytova["final"])
    assert got["pairs"][0] == {"original": "cytova", "final": cytova["final"], "here": places,
                               "elsewhere": 2 * places, "other_calls": 2}  # fmt: skip
    assert got["pairs"][1]["here"] == got["pairs"][1]["elsewhere"] == 0 and got["other_calls"] == 2
    # decided in one of the other calls: those places no longer wait for anything
    ids = [s["id"] for s in client.get("/v1/transcripts/reach-2/suggestions", headers=AUTH).json()
           if s["original"] == "Cytova"]  # fmt: skip
    rejected = _post(client, "/v1/transcripts/reach-2/decisions", {"action": "reject", "suggestion_ids": ids})
    assert rejected.status_code == 200
    assert _post(client, "/v1/review/reach", ask).json()["pairs"][0]["other_calls"] == 1
    # bad input is named; an unknown transcript is a 404
    assert _post(client, "/v1/review/reach", {**ask, "pairs": []}).json()["error"]["field"] == "pairs"
    assert _post(client, "/v1/review/reach", {**ask, "transcript_id": "nope"}).status_code == 404
