"""What a decision teaches, said on the page before it is taken: a reject's reach, a bulk reject, two finals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import AUTH, KEY, playwright_api, shot, sign_in

DANAHER = Path(__file__).parents[1] / "data" / "danaher_covid.json"
COLOMBIA_UH = Path(__file__).parents[1] / "data" / "colombia_uh.json"


def _analyze(server: str, tid: str, segments: list[dict[str, str]], entities: dict[str, list[str]]) -> list[Any]:
    r = httpx.post(f"{server}/v1/reliability/analyze", headers=AUTH, timeout=120,
                   json={"transcript_id": tid, "user_id": "alice", "segments": segments,
                         "canonical_entities": entities})  # fmt: skip
    assert r.status_code == 200, r.text
    return list(r.json()["suggestions"])


def _open_at(page: Any, server: str, tid: str, suggestion: str) -> None:
    """A deep link to one suggestion, signing in when the tab holds no key yet."""
    page.goto(f"{server}/review?t={tid}&s={suggestion}")
    if not page.evaluate("() => !!sessionStorage.getItem('namesake.key')"):
        page.fill("#key", KEY)
        page.keyboard.press("Enter")
    playwright_api.expect(page.locator("#transcript-title")).to_have_text(tid)
    playwright_api.expect(page.locator(f"#s-{suggestion}.current, mark.s.current").first).to_be_visible()


def test_the_panel_says_what_a_reject_refuses_and_a_span_that_ate_words_refuses_only_itself(
    server: str, page: Any
) -> None:
    expect = playwright_api.expect
    call = json.loads(DANAHER.read_text())
    found = _analyze(server, "danaher", call["segments"], call["canonical_entities"])
    again = _analyze(server, "danaher-2", call["segments"], call["canonical_entities"])
    uh = json.loads(COLOMBIA_UH.read_text())
    wide = next(s for s in _analyze(server, "colombia", uh["segments"], uh["canonical_entities"])
                if s["original"] == "Colombia, uh")  # fmt: skip
    plain = next(s for s in found if s["original"] == "covid")
    open_ = lambda made: sum(s["original"].lower() == "covid" and s["final"] == "COVID"  # noqa: E731
                             and s["status"] in ("pending", "auto_applied") for s in made)  # fmt: skip
    _open_at(page, server, "colombia", wide["id"])
    teaches = page.locator("#detail-reject-teaches")
    expect(teaches).to_contain_text("refuses only “Colombia, uh” → Colombian")
    expect(teaches).to_contain_text("would delete “uh”")
    shot(page, "review-reject-teaches")
    _open_at(page, server, "danaher", plain["id"])
    expect(teaches).to_have_text("A reject refuses “covid” → COVID for your next calls too.")
    # and before it is taken, how many places that is, here and in the user's other call
    expect(page.locator("#detail-reach")).to_have_text(
        f"Open at {open_(found)} places here and at {open_(again)} places in 1 of your other calls: an accept's "
        "lesson or a reject reaches them when they are analysed again."
    )
    page.set_viewport_size({"width": 390, "height": 844})
    expect(teaches).to_contain_text("for your next calls too")


def test_two_finals_taught_for_the_same_words_are_shown_as_a_choice(server: str, page: Any) -> None:
    expect = playwright_api.expect
    for tid, final in (("call-a", "COVID"), ("call-b", "COVID-19")):
        text = "cases of COVERT rose again"
        _analyze(server, tid, [{"id": "1", "text": text}], {"keywords": ["COVID-19", "COVID"]})
        r = httpx.post(f"{server}/v1/corrections", headers=AUTH, json={
            "user_id": "alice", "transcript_id": tid, "segment_id": "1", "start_char": 9, "end_char": 15,
            "original": "COVERT", "final": final, "entity_type": "KEYWORD", "segment_text": text})  # fmt: skip
        assert r.status_code in (200, 201), r.text
    taught = httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json()
    assert [(c["final"], c["state"], c["conflict_with"]["final"]) for c in taught] == [
        ("COVID-19", "conflict", "COVID")
    ]
    found = _analyze(server, "call-c", [{"id": "1", "text": "and COVERT cases fell"}], {"keywords": ["COVID-19"]})
    mine = next(s for s in found if s["original"] == "COVERT")
    assert (mine["final"], mine["status"]) == ("COVID-19", "pending")  # neither final applied by itself
    sign_in(page, server)
    _open_at(page, server, "call-c", mine["id"])
    expect(page.locator("#detail-conflict")).to_contain_text("You also taught “COVERT” → COVID in call-a")
    expect(page.locator("#detail-conflict")).to_contain_text("neither applies by itself")
    # a word replaced, none deleted: a reject refuses the pair as it is
    expect(page.locator("#detail-reject-teaches")).to_have_text(
        "A reject refuses “COVERT” → COVID-19 for your next calls too."
    )
    shot(page, "review-conflict")


def test_a_taught_pair_left_alone_where_it_was_taught_says_why_it_waits(server: str, page: Any) -> None:
    said = ["Thanks, line.", "The line grew in the quarter.", "A new product line for stores."]
    _analyze(server, "call-l", [{"id": str(i), "text": t} for i, t in enumerate(said)], {"persons": ["Ryan Cole"]})
    r = httpx.post(f"{server}/v1/corrections", headers=AUTH, json={
        "user_id": "alice", "transcript_id": "call-l", "segment_id": "0", "start_char": 8, "end_char": 12,
        "original": "line", "final": "Ryan", "entity_type": "PERSON", "segment_text": said[0]})  # fmt: skip
    assert r.status_code in (200, 201), r.text
    found = _analyze(
        server, "call-m", [{"id": "1", "text": "The line of credit grew again."}], {"persons": ["Ryan Cole"]}
    )
    mine = next(s for s in found if s["original"] == "line")
    assert (mine["final"], mine["status"], mine["signals"]["remembered_left_alone"]) == ("Ryan", "pending", 2.0)
    assert mine["confidence"] >= 0.3  # taught: not left in the fold where the list alone would put it
    sign_in(page, server)
    _open_at(page, server, "call-m", mine["id"])
    playwright_api.expect(page.locator("mark.s.current")).not_to_have_class(re.compile(r"\bfolded\b"))
    playwright_api.expect(page.locator("mark.s.current + .proposal")).to_have_text("→ Ryan")
    playwright_api.expect(page.locator("#detail-left-alone")).to_have_text(
        "Where you taught it you left “line” as heard 2×, so here it waits for you."
    )
    shot(page, "review-left-alone")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#detail-left-alone").scroll_into_view_if_needed()
    playwright_api.expect(page.locator("#detail-left-alone")).to_be_in_viewport()
    page.locator("#bar-accept").click()  # decided with the thumb: the wait is over, the lesson taught again
    playwright_api.expect(page.locator("#transcript-meta")).to_contain_text("1 of 1 decided")
    taught = httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json()
    assert [(c["original"], c["final"], c["frequency"]) for c in taught] == [("line", "Ryan", 2)]


def test_the_selection_stays_in_view_when_the_fold_opens_and_closes(server: str, page: Any) -> None:
    call = json.loads(DANAHER.read_text())
    found = _analyze(server, "danaher", call["segments"], call["canonical_entities"])
    shown = sorted((s for s in found if s["confidence"] >= 0.3), key=lambda s: int(s["segment_id"]))
    for size, chosen in [(size, s) for size in ({"width": 1440, "height": 860}, {"width": 390, "height": 844})
                         for s in (shown[0], shown[len(shown) // 2], shown[-1])]:  # fmt: skip
        page.set_viewport_size(size)
        _open_at(page, server, "danaher", chosen["id"])
        for _ in range(2):  # z shows the folded ones (laid out above it), z folds them again
            page.keyboard.press("z")
            page.wait_for_timeout(300)
            box = page.locator("mark.s.current").bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"], (size, box)


@pytest.mark.server(reliability_auto_apply_threshold=1.0, reliability_read_auto_apply_threshold=1.0)
def test_accepting_a_change_that_removes_words_at_several_places_asks_first(server: str, page: Any) -> None:
    expect = playwright_api.expect
    segments = [{"id": "1", "text": "The M and A market was slow."}, {"id": "2", "text": "More M and A is coming."}]
    found = _analyze(server, "ma", segments, {"keywords": ["M&A"]})
    said = [s for s in found if s["final"] == "M&A" and s["original"] == "M and A"]
    assert len(said) == 2 and {s["status"] for s in said} == {"pending"}, found
    _open_at(page, server, "ma", said[0]["id"])
    page.keyboard.press("a")
    expect(page.locator("#confirm-text")).to_contain_text("Accept “M and A → M&A” at 2 places in this call?")
    expect(page.locator("#confirm-text")).to_contain_text("It removes words at each")
    expect(page.locator("#confirm-text")).to_contain_text("it is not open in any of your other calls")
    page.keyboard.press("Escape")  # nothing decided
    statuses = lambda: {s["status"] for s in httpx.get(f"{server}/v1/transcripts/ma/suggestions", headers=AUTH).json()}  # noqa: E731
    assert statuses() == {"pending"}
    page.keyboard.press("a")
    expect(page.locator("#confirm-text")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("Accepted all 2")
    assert statuses() == {"validated"}


def test_a_half_fix_is_offered_whole_and_w_completes_it_and_teaches_the_whole_name(server: str, page: Any) -> None:
    """ "COVERT" fixed by hand to COVID beside "NINETEEN", for the list's COVID-19: the panel offers the whole fix."""
    expect = playwright_api.expect
    text = "Cases of COVERT NINETEEN fell this quarter."
    _analyze(server, "covid", [{"id": "1", "text": text}], {"keywords": ["COVID-19"]})
    start = text.index("COVERT")
    half = {"user_id": "alice", "transcript_id": "covid", "segment_id": "1", "start_char": start,
            "end_char": start + 6, "original": "COVERT", "final": "COVID", "segment_text": text}  # fmt: skip
    r = httpx.post(f"{server}/v1/corrections", headers=AUTH, json=half)
    assert r.status_code == 201, r.text
    taught = lambda: {f"{c['original']}→{c['final']}"  # noqa: E731
                      for c in httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json()}  # fmt: skip
    assert taught() == {"COVERT→COVID"}
    _open_at(page, server, "covid", r.json()["suggestion"]["id"])
    offer = page.locator("#detail-whole")
    expect(offer).to_contain_text("Part of COVID-19 is still as heard: “COVERT NINETEEN” → COVID-19")
    shot(page, "review-whole-fix")
    page.keyboard.press("w")
    expect(page.locator("#status")).to_contain_text("Completed: COVERT NINETEEN → COVID-19")
    expect(page.locator(".segment").first).to_contain_text("COVID-19 fell")
    expect(offer).to_have_count(0)  # the whole fix is selected: nothing left to complete
    assert taught() == {"COVERT NINETEEN→COVID-19"}  # the half's lesson taken back with it
    page.keyboard.press("u")
    expect(page.locator("#status")).to_contain_text("Undone")
    assert taught() == set()


def test_an_address_fixed_by_hand_over_words_that_do_not_say_it_is_shown_as_kept_where_it_was_taught(
    server: str, page: Any
) -> None:
    said = "The first semester results of Energous were strong."
    _analyze(server, "call-1", [{"id": "1", "text": said}], {"orgs": ["Enagas"]})
    fix = {"user_id": "alice", "transcript_id": "call-1", "segment_id": "1", "start_char": said.index("Energous"),
           "end_char": said.index("Energous") + 8, "original": "Energous", "final": "www.enagas.es",
           "entity_type": "ORG", "segment_text": said}  # fmt: skip
    assert httpx.post(f"{server}/v1/corrections", json=fix, headers=AUTH).status_code == 201
    found = _analyze(
        server, "call-2", [{"id": "1", "text": "Companies like Energous are into that."}], {"orgs": ["Enagas"]}
    )
    assert [(s["original"], s["final"]) for s in found] == [("Energous", "Enagas")]  # the list's name, not the address
    sign_in(page, server)
    page.locator("#queue li", has_text="call-2").click()
    playwright_api.expect(page.locator("#transcript-title")).to_have_text("call-2")
    page.keyboard.press("m")
    row = page.locator("#memory-table tbody tr", has_text="www.enagas.es")
    playwright_api.expect(row).to_contain_text("only where it was taught")
    playwright_api.expect(row.locator('td[data-label="Where"]')).to_have_text("the place it was taught, nowhere else")
    shot(page, "memory-one-off")
    page.set_viewport_size({"width": 390, "height": 844})
    playwright_api.expect(row.locator('td[data-label="Where"]')).to_be_visible()
    shot(page, "memory-one-off-phone")
