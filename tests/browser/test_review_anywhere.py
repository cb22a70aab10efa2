"""Review anywhere, in context: the suggestion in view, decisions on a phone, fixes with a scope, replace all, undo
that survives a reload."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.conftest import AUTH, ENTITIES, analyze, playwright_api, shot, sign_in, suggestions

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 860}


def _long_call(server: str) -> list[dict[str, Any]]:
    """A 10,000-word call (500 segments) with a mistake in every other segment."""
    words = "the team met Reiner Blair and the Cytova people about the quarter and all the numbers we saw this week"
    segments = [{"id": str(i), "text": words if i % 2 else words.replace("Cytova", "Cytiva")} for i in range(500)]
    r = httpx.put(f"{server}/v1/transcripts/long-2/canonical-entities", json={**ENTITIES, "user_id": "alice"},
                  headers=AUTH)  # fmt: skip
    assert r.status_code == 200, r.text
    r = httpx.post(f"{server}/v1/reliability/analyze", headers=AUTH, timeout=120,
                   json={"transcript_id": "long-2", "user_id": "alice", "segments": segments})  # fmt: skip
    assert r.status_code == 200, r.text
    return list(r.json()["suggestions"])


def _in_viewport(page: Any, selector: str) -> bool:
    """Whether the element is wholly inside the viewport, above the phone's action bar when it shows."""
    return bool(page.evaluate("""(sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        const bar = document.querySelector('#detail.sheet') || document.querySelector('#action-bar');
        const barShown = bar && getComputedStyle(bar).display !== 'none' && getComputedStyle(bar).position === 'fixed';
        const bottom = barShown ? bar.getBoundingClientRect().top : innerHeight;
        return r.top >= 0 && r.bottom <= bottom && r.height > 0;
    }""", selector))  # fmt: skip


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_a_linked_suggestion_deep_in_a_long_call_is_in_view_after_load_and_after_reload(
    server: str, page: Any, viewport: dict[str, int]
) -> None:
    made = _long_call(server)
    deep = sorted((s for s in made if s["segment_id"] == "441"), key=lambda s: s["start_char"])[0]
    page.set_viewport_size(viewport)
    sign_in(page, server)
    playwright_api.expect(page.locator("#queue li").first).to_contain_text("long-2")
    page.goto(f"{server}/review?t=long-2&s={deep['id']}")
    current = page.locator("mark.s.current")
    playwright_api.expect(current).to_have_count(1)
    page.wait_for_function("() => document.querySelector('mark.s.current')?.getBoundingClientRect().top > -1")
    page.wait_for_timeout(300)  # the second measure after far segments are laid out
    assert _in_viewport(page, "mark.s.current"), "the linked suggestion is not on screen after load"
    assert page.locator("#detail .change ins").inner_text() == deep["final"]
    page.reload()
    playwright_api.expect(page.locator("mark.s.current")).to_have_count(1)
    page.wait_for_timeout(300)
    assert _in_viewport(page, "mark.s.current"), "the linked suggestion is not on screen after reload"
    page.keyboard.press("J")  # the next to decide, centred too
    page.wait_for_timeout(300)
    assert _in_viewport(page, "mark.s.current")


def test_on_a_phone_a_reviewer_selects_accepts_and_undoes_with_the_action_bar(server: str, page: Any) -> None:
    expect = playwright_api.expect
    analyze(server, "call-1")
    page.set_viewport_size(PHONE)
    sign_in(page, server)
    page.locator("#queue li", has_text="call-1").click()
    bar = page.locator("#action-bar")
    expect(bar).to_be_visible()
    box = bar.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"] + 1  # at the bottom of the screen
    page.locator("mark.s[title^='Cytova ']").first.click()  # a tap selects
    expect(page.locator("#bar-change")).to_contain_text("Cytova → Cytiva")
    expect(page.locator("#bar-count")).to_have_text("All 2: ")  # one tap decides both places: the bar says so first
    shot(page, "review-phone-bar")
    page.locator("#bar-accept").click()
    expect(page.locator("#status")).to_contain_text("Accepted all 2")
    assert {s["status"] for s in suggestions(server, "call-1") if s["original"] == "Cytova"} == {"validated"}
    assert _in_viewport(page, "mark.s.current")  # the page moved to what is left, and it is in view
    page.locator("#bar-undo").click()
    expect(page.locator("#status")).to_contain_text("Undone")
    assert {s["status"] for s in suggestions(server, "call-1") if s["original"] == "Cytova"} == {"pending"}
    left = page.evaluate("document.querySelector('#segments').getBoundingClientRect().bottom")
    assert left > 0, "the decisions were made without scrolling past the transcript"
    # the memory reads at 390 px: each correction a card, its Forget button on screen
    page.locator("#bar-accept").click()
    expect(page.locator("#status")).to_contain_text("Accepted")
    page.keyboard.press("m")
    forget = page.locator("#memory-table tbody tr").first.locator("button")
    expect(forget).to_be_visible()
    fbox = forget.bounding_box()
    assert fbox is not None and fbox["x"] + fbox["width"] <= PHONE["width"]
    shot(page, "review-phone-memory")


@pytest.mark.server(review_fold_below=0.99)
def test_on_a_phone_the_panel_opens_beside_the_selection_and_words_fold_and_reject_fold_are_in_the_bar(
    server: str, page: Any
) -> None:
    expect = playwright_api.expect
    first = analyze(server, "call-1")
    pending = sum(s["status"] == "pending" for s in first["suggestions"])
    page.set_viewport_size(PHONE)
    sign_in(page, server)
    page.locator("#queue li", has_text="call-1").click()
    page.locator("#bar-fold").click()  # the fold opened from the bar
    expect(page.locator("mark.s.folded")).to_have_count(0)
    page.locator("mark.s[title^='Cytova ']").first.click()
    page.locator("#bar-why").click()  # the panel as a sheet: reasons, occurrences, scope beside the selection
    sheet = page.locator("#detail.sheet")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("Cytova")
    expect(sheet.locator("#detail-scope")).to_be_visible()
    box = sheet.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"]  # all of it on screen
    page.wait_for_timeout(300)
    assert _in_viewport(page, "mark.s.current"), "the selection is hidden under the sheet"
    shot(page, "review-phone-sheet")
    page.uncheck("#pending-only")  # a filter change redraws the queue above the transcript
    page.wait_for_timeout(300)
    assert _in_viewport(page, "mark.s.current"), "the selection left the screen with the filter change"
    page.locator("#bar-accept").click()  # the word on it covers neither the sheet nor the bar
    expect(page.locator("#status")).to_contain_text("Accepted")
    toast, bar = page.locator("#status").bounding_box(), page.locator("#action-bar").bounding_box()
    assert toast and bar and box and toast["y"] + toast["height"] <= min(box["y"], bar["y"]), (toast, box, bar)
    page.locator("#bar-undo").click()
    expect(page.locator("#status")).to_contain_text("Undone")
    page.locator("#bar-why").click()
    expect(page.locator("#detail.sheet")).to_have_count(0)
    _select_words(page, "2", "Zorblax")  # a long press selects words; the bar fixes them by hand
    page.locator("#bar-fix").click()
    expect(page.locator("#edit-dialog")).to_be_visible()
    page.fill("#edit-final", "Zorblaxx")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("Fixed")
    page.locator("#bar-fold").click()  # folded again, then all of them rejected from the bar, after asking
    page.locator("#bar-reject-fold").click()
    expect(page.locator("#confirm-text")).to_contain_text("folded suggestions")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("Rejected all")
    statuses = {s["status"] for s in suggestions(server, "call-1") if s["source"] != "manual"}
    assert statuses == {"rejected"} and pending > 1


def _select_words(page: Any, segment: str, words: str) -> None:
    """Select the first occurrence of `words` in a segment, as a mouse would."""
    page.evaluate("""([seg, words]) => {
        const div = document.querySelector(`.text[data-segment="${seg}"]`);
        for (const node of div.querySelectorAll('span.t')) {
            const at = node.textContent.indexOf(words);
            if (at < 0) continue;
            const range = document.createRange();
            range.setStart(node.firstChild, at);
            range.setEnd(node.firstChild, at + words.length);
            const sel = getSelection(); sel.removeAllRanges(); sel.addRange(range);
            return;
        }
        throw new Error('words not found');
    }""", [segment, words])  # fmt: skip


def _analyze_text(server: str, tid: str, texts: list[str], entities: dict[str, list[str]]) -> list[dict[str, Any]]:
    r = httpx.put(f"{server}/v1/transcripts/{tid}/canonical-entities", json={**entities, "user_id": "alice"},
                  headers=AUTH)  # fmt: skip
    assert r.status_code == 200, r.text
    segments = [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    r = httpx.post(f"{server}/v1/reliability/analyze", headers=AUTH, timeout=60,
                   json={"transcript_id": tid, "user_id": "alice", "segments": segments})  # fmt: skip
    assert r.status_code == 200, r.text
    return list(r.json()["suggestions"])


def test_replace_all_previews_each_match_and_is_undone_as_one(server: str, page: Any) -> None:
    expect = playwright_api.expect
    texts = ["We moved the logs to Data Dog last week.", "Nothing else changed.", "Data Dog alerts fired twice.",
             "The data dog dashboards are shared."]  # fmt: skip
    _analyze_text(server, "rep-1", texts, {"orgs": ["Acme"]})
    sign_in(page, server)
    expect(page.locator("#queue")).to_be_visible()
    page.goto(f"{server}/review?t=rep-1")  # nothing suggested: not in the pending queue, opened by its address
    expect(page.locator("#transcript-title")).to_have_text("rep-1")
    _select_words(page, "0", "Data Dog")
    page.keyboard.press("f")
    expect(page.locator("#edit-dialog")).to_be_visible()
    expect(page.locator("#edit-matches")).to_be_visible()
    expect(page.locator("#edit-all-count")).to_have_text("2 other matches")
    expect(page.locator("#edit-match-list li")).to_have_count(2)
    expect(page.locator("#edit-match-list li").nth(1)).to_contain_text("dashboards")  # each in its sentence
    page.fill("#edit-final", "Datadog")
    page.check("#edit-all")
    page.locator("#edit-match-list .match-tick").nth(1).uncheck()  # "data dog dashboards": left as it is
    shot(page, "review-replace-all")
    page.locator("#edit-ok").click()
    expect(page.locator("#status")).to_contain_text("Fixed: Data Dog → Datadog (2×)")
    expect(page.locator("mark.s.validated")).to_have_count(2)
    assert "data dog dashboards" in page.locator(".text[data-segment='3']").inner_text()
    history = httpx.get(f"{server}/v1/transcripts/rep-1/history", headers=AUTH).json()
    assert [(h["action"], len(h["suggestion_ids"]), h["undone_at"]) for h in history] == [("manual", 2, None)]
    page.keyboard.press("u")
    expect(page.locator("#status")).to_contain_text("Undone")
    expect(page.locator("mark.s.validated")).to_have_count(0)
    assert httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json() == []


def test_undo_survives_a_reload(server: str, page: Any) -> None:
    expect = playwright_api.expect
    analyze(server, "call-1")
    sign_in(page, server)
    page.locator("#queue li", has_text="call-1").click()
    expect(page.locator("mark.s.current")).to_have_count(1)
    page.keyboard.press("a")
    expect(page.locator("#status")).to_contain_text("Accepted")
    assert len(httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json()) == 1
    page.reload()
    expect(page.locator("#transcript-title")).to_have_text("call-1")
    expect(page.locator("#history-count")).to_have_text("1 decision")
    page.keyboard.press("u")
    expect(page.locator("#status")).to_contain_text("Undone")
    assert httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json() == []
    expect(page.locator("#history-list li.undone")).to_have_count(1)
    expect(page.locator("#history-count")).to_have_text("0 decisions, 1 undone")  # the header counts the list


TRIAL = ["The drug is now in Phase three of its trial.", "Enrolment for the trial is complete."]
OTHER = ["Margins were ninety three percent this quarter.", "Revenue grew three point six percent."]


def _fix_three(page: Any, server: str, tid: str, scope: str | None) -> None:
    expect = playwright_api.expect
    page.goto(f"{server}/review?t={tid}")
    expect(page.locator("#transcript-title")).to_have_text(tid)
    _select_words(page, "0", "three")
    page.keyboard.press("f")
    page.fill("#edit-final", "III")
    expect(page.locator("#edit-dialog .scope-note")).to_contain_text("everyday words")  # the page says so
    expect(page.locator("#scope-select")).to_have_value("list")  # narrow by default
    if scope:
        page.select_option("#scope-select", scope)
        shot(page, "review-scope")
    page.locator("#edit-ok").click()
    expect(page.locator("#status")).to_contain_text("Fixed: three → III")


def test_a_fix_of_everyday_words_stays_where_it_was_taught_unless_widened(server: str, page: Any) -> None:
    _analyze_text(server, "trial-1", TRIAL, {"orgs": ["Acme Pharma"]})
    sign_in(page, server)
    playwright_api.expect(page.locator("#queue li").first).to_be_visible()
    _fix_three(page, server, "trial-1", None)
    taught = httpx.get(f"{server}/v1/users/alice/corrections", headers=AUTH).json()
    assert [(c["original"], c["final"], c["scope"]) for c in taught] == [("three", "III", "list")]
    other = _analyze_text(server, "other-1", OTHER, {"orgs": ["Globex"]})
    assert not [s for s in other if s["final"] == "III"], "the default scope kept it to calls listing III"
    again = _analyze_text(server, "trial-1", TRIAL, {"orgs": ["Acme Pharma"]})
    assert [s["final"] for s in again if s["original"] == "three"] == ["III"], "it comes back where it was taught"
    _analyze_text(server, "trial-2", TRIAL, {"orgs": ["Acme Pharma"]})
    _fix_three(page, server, "trial-2", "user")
    other = _analyze_text(server, "other-2", OTHER, {"orgs": ["Globex"]})
    assert [s for s in other if s["final"] == "III"], "widened to every call, it comes back in another call"
