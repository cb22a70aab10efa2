// Decisions: accept / edit / reject a suggestion (every occurrence of its pair at once), fix by hand, undo.

import { TYPE_WORDS, TYPES } from "/review/assets/names.js";
import { $, SCOPE_ORDER, api, confirmed, el, enc, isOpen, pairKey, say, scopeWords, state } from "/review/assets/core.js";
import { loadDefaultScope, reachOf, scopeChoice, scopeOf } from "/review/assets/detail.js";
import { lastStanding, loadHistory } from "/review/assets/history.js";
import { otherMatches, showMatches, tickedMatches } from "/review/assets/matches.js";
import { refreshQueueCounts } from "/review/assets/queue.js";
import { selectedSpan } from "/review/assets/select.js";
import {
  folded, groupOf, heardOtherwise, nextToDecide, openTranscript, renderTranscript, select,
} from "/review/assets/transcript.js";

const UNDO_DEPTH = 50;
const SAID = { accept: "Accepted", edit: "Edited", reject: "Rejected" };

function remember(ids, label) {
  state.reach.clear(); // a decision changes what is open
  state.undo.push({ transcriptId: state.view.transcript_id, ids, label });
  if (state.undo.length > UNDO_DEPTH) state.undo.shift();
}

function applyChanged(changed) {
  const byId = new Map(changed.map((s) => [s.id, s]));
  state.order = state.order.map((s) => byId.get(s.id) || s);
}

// Reject every folded suggestion at once (under the server's threshold, most are wrong); u brings them back.
export async function rejectFolded() {
  const ids = state.order.filter(folded).map((s) => s.id);
  if (!ids.length) { say("Nothing is folded", true); return; }
  const changes = [...new Map(state.order.filter(folded).map((s) => [pairKey(s), s])).values()];
  if (!(await confirmed(`Reject all ${ids.length} folded suggestions in this call (${changes.length} different ` +
    `changes)? Each rejected change is refused for your next calls too${await elsewhere(changes, "the refusal")} ` +
    "(u brings them back).", "Reject all"))) return;
  try {
    const { data } = await api("POST", `/v1/transcripts/${enc(state.view.transcript_id)}/decisions`,
      { action: "reject", suggestion_ids: ids });
    applyChanged(data.suggestions);
  } catch (err) {
    say(err.message, true);
    return;
  }
  remember(ids, `${ids.length} low-confidence suggestions`);
  await loadHistory(state.view.transcript_id);
  renderTranscript();
  select(nextToDecide(state.current) ?? state.current);
  refreshQueueCounts();
  say(`Rejected all ${ids.length} folded`);
}

// Decide the current suggestion's group (or it alone, when opened with g); throws ApiError for the dialog.
async function send(action, extra = {}) {
  const at = state.current;
  const members = groupOf(at);
  if (!members.length) return false;
  const ids = members.map((i) => state.order[i].id);
  const tid = state.view.transcript_id;
  const lead = state.order[at];
  const scope = action === "reject" ? {} : { scope: extra.scope || scopeOf(lead) };
  // one route whether the group holds one suggestion or many: the server decides both alike
  const { data } = await api("POST", `/v1/transcripts/${enc(tid)}/decisions`,
    { action, suggestion_ids: ids, ...extra, ...scope });
  applyChanged(data.suggestions);
  const s = state.order[at];
  remember(ids, `${s.original} → ${s.final}${ids.length > 1 ? ` (${ids.length}×)` : ""}`);
  await loadHistory(tid);
  renderTranscript(); // the memory is read again when the next transcript opens, not on every key
  select(nextToDecide(at) ?? at);
  refreshQueueCounts();
  const where = data.scope ? `: remembered for ${scopeWords(data.scope, s.final, state.view.user_id)}` : "";
  say(`${SAID[action]}${ids.length > 1 ? ` all ${ids.length}` : ""}${where}`);
  return true;
}

// A change that writes fewer words than it replaces ("covid-19. I'll" → COVID) removes words wherever it is applied.
const deletesWords = (s) => s.final.trim().split(/\s+/).length < s.original.trim().split(/\s+/).length;

// How far changes reach beyond this call, for a confirmation: ": 3 of them are open at 7 places in 2 of your other
// calls, which …", or that none is; nothing when the server cannot say.
async function elsewhere(changes, what) {
  let reach;
  try {
    reach = await reachOf(changes);
  } catch {
    return "";
  }
  const open = reach.pairs.filter((r) => r.elsewhere > 0);
  if (!open.length) return changes.length === 1 ? "; it is not open in any of your other calls"
    : "; none of them is open in your other calls";
  const places = open.reduce((n, r) => n + r.elsewhere, 0);
  const which = changes.length === 1 ? "it is" : `${open.length} of them are`;
  return `; ${which} open at ${places} ${places === 1 ? "place" : "places"} in ${reach.other_calls} of your other ` +
    `calls, which ${what} reaches when they are analysed again`;
}

// Accepting a change that removes words at more than one place asks first, saying how many places, here and in the
// user's other calls.
async function acceptsEverywhere(members) {
  const removing = members.map((i) => state.order[i]).filter(deletesWords);
  if (members.length < 2 || !removing.length) return true;
  const s = removing[0];
  const changes = [...new Map(members.map((i) => [pairKey(state.order[i]), state.order[i]])).values()];
  return confirmed(`Accept “${s.original} → ${s.final}” at ${members.length} places in this call? It removes words at ` +
    `${removing.length === members.length ? "each" : `${removing.length} of them`}` +
    `${await elsewhere(changes, "the lesson")} (g decides one at a time).`, "Accept all");
}

export async function decide(action) {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) { say("Already decided: u undoes it", true); return; }
  if ((action === "accept" || action === "edit") && !(await acceptsEverywhere(groupOf(state.current)))) return;
  try {
    await send(action);
  } catch (err) {
    say(err.message, true);
  }
}

export async function editCurrent() {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) { say("Already decided: u undoes it", true); return; }
  const n = groupOf(state.current).length;
  await ask({
    title: n > 1 ? `Edit all ${n}` : "Edit", original: s.original, value: s.final, type: s.entity_type,
    scope: scopeOf(s), matches: [],
    submit: ({ final, type, scope }) => send("edit", { final, scope, ...(type === s.entity_type ? {} : { entity_type: type }) }),
  });
}

// Undo the last decision (a group's at once): the suggestions as proposed, the memory as it was.
export async function undoLast() {
  // the decisions taken in this tab first; after a reload, the open transcript's as the server kept them
  const last = state.undo.pop() || lastStanding();
  if (!last) { say("Nothing to undo", true); return; }
  try {
    const { data } = await api("POST", `/v1/transcripts/${enc(last.transcriptId)}/reopen`, { suggestion_ids: last.ids });
    const back = data.suggestions[0]?.id;
    await openTranscript(last.transcriptId, { suggestionId: back, push: last.transcriptId !== state.view?.transcript_id });
  } catch (err) {
    say(`Cannot undo ${last.label}: ${err.message}`, true);
    return;
  }
  refreshQueueCounts();
  say(`Undone: ${last.label}`);
}

// A dialog that stays open until `submit` succeeds: a refused value keeps the text, the error under the field.
// It says where the lesson applies next (scope) and, for a fix by hand, offers the other matches (replace all).
export function ask({ title, original, value, type, scope, matches, submit }) {
  const dialog = $("#edit-dialog");
  const error = $("#edit-error");
  let chosen = scope;
  let picked = false; // the reviewer chose a scope: the default no longer follows the final they type
  $("#edit-title").textContent = title;
  $("#edit-original").textContent = `Heard: ${original}`;
  $("#edit-final").value = value;
  $("#edit-type").replaceChildren(...TYPES.map((t) => el("option", { value: t, selected: t === type }, TYPE_WORDS[t] || t)));
  const drawScope = async () => {
    const final = $("#edit-final").value.trim() || value;
    if (!picked) chosen = (await loadDefaultScope(original, final)).scope;
    if ($("#edit-final").value.trim() !== final && $("#edit-final").value.trim()) return; // typed on meanwhile
    $("#edit-scope").replaceChildren(scopeChoice(original, final, chosen, (v) => { chosen = v; picked = true; }, false));
  };
  drawScope();
  $("#edit-final").oninput = () => { clearTimeout(drawScope.timer); drawScope.timer = setTimeout(drawScope, 250); };
  showMatches(matches);
  error.textContent = "";
  return new Promise((resolve) => {
    const done = (result) => { dialog.close(); resolve(result); };
    $("#edit-form").onsubmit = async (ev) => {
      ev.preventDefault();
      const final = $("#edit-final").value.trim();
      if (!final) { error.textContent = "Write the name as it should be."; return; }
      try {
        await submit({ final, type: $("#edit-type").value, scope: chosen, all: $("#edit-all").checked });
      } catch (err) {
        error.textContent = err.message;
        $("#edit-final").focus();
        return;
      }
      done(true);
    };
    // Enter saves from every field, the type list included (Chromium would open the list)
    $("#edit-form").onkeydown = (ev) => {
      if (ev.key === "Enter" && ev.target.tagName === "SELECT") { ev.preventDefault(); $("#edit-form").requestSubmit(); }
    };
    $("#edit-cancel").onclick = () => done(null);
    dialog.oncancel = () => resolve(null);
    dialog.showModal();
    $("#edit-final").select();
  });
}

// The type a fix by hand starts from: the suggestion under the words, else the one selected, else a keyword.
function typeUnder(span) {
  const under = state.order.find((s) => s.segment_id === span.segmentId && s.start_char < span.end &&
    s.end_char > span.start);
  return (under || state.order[state.current])?.entity_type || "KEYWORD";
}

export async function fixSelection() {
  const span = selectedSpan();
  if (!span) { say("Select the words to fix first (mouse, or Shift+arrows from a suggestion).", true); return; }
  if (span.error) { say(span.error, true); return; }
  const seg = state.view.segments.find((s) => s.id === span.segmentId);
  const matches = otherMatches(span);
  const dflt = await loadDefaultScope(span.original, span.shown);
  await ask({
    title: "Fix by hand", original: span.original, value: span.shown, type: typeUnder(span), scope: dflt.scope, matches,
    submit: async ({ final, type, scope, all }) => {
      const also = (all ? tickedMatches(matches) : [])
        .map(({ segment_id, start_char, end_char }) => ({ segment_id, start_char, end_char }));
      const { data } = await api("POST", "/v1/corrections", {
        user_id: state.view.user_id, transcript_id: state.view.transcript_id, segment_id: span.segmentId,
        start_char: span.start, end_char: span.end, original: span.original, final, entity_type: type,
        segment_text: seg.text, scope, also,
      });
      window.getSelection().removeAllRanges();
      const ids = [data.suggestion.id, ...data.also.map((s) => s.id)];
      const label = `${span.original} → ${final}${ids.length > 1 ? ` (${ids.length}×)` : ""}`;
      remember(ids, label);
      say(`Fixed: ${label}, remembered for ${scopeWords(data.scope, final, state.view.user_id)}`);
      await openTranscript(state.view.transcript_id, { suggestionId: data.suggestion.id, push: false });
    },
  });
}

// w: a half fix made whole — the words beside it that complete its list value fixed with it, taught as one pair
// (an accepted half is taken back in the same decision; u undoes the whole fix).
export async function completeWhole() {
  const s = state.order[state.current];
  const whole = s && state.view.completions?.[s.id];
  if (!whole) { say("Nothing to complete here: the suggestion writes a whole name", true); return; }
  const tid = state.view.transcript_id;
  const { data } = await api("POST", `/v1/suggestions/${enc(s.id)}/complete`, { transcript_id: tid, scope: scopeOf(s) });
  const label = `${whole.original} → ${whole.final}`;
  remember([data.suggestion.id], label);
  say(`Completed: ${label}, remembered for ${scopeWords(data.scope, whole.final, state.view.user_id)}`);
  await openTranscript(tid, { suggestionId: data.suggestion.id, push: false });
}

// s: where the selected suggestion's lesson applies next, one step wider each press (this transcript → its list →
// all of the user's calls → this transcript).
export function cycleScope() {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) { say("Select a suggestion to decide first", true); return; }
  const next = SCOPE_ORDER[(SCOPE_ORDER.indexOf(scopeOf(s)) + 1) % SCOPE_ORDER.length];
  state.scopes.set(pairKey(s), next);
  select(state.current, false);
  say(`Applies next to ${scopeWords(next, s.final, state.view.user_id)}`);
}

// A: accept every shown suggestion proposing this name, however it was heard ("aluminum", "luna", "lumen" →
// Illumina): one decision per way heard (each taught, with its own scope), undone together.
export async function acceptHeardOtherwise() {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) { say("Already decided: u undoes it", true); return; }
  const pairs = [...heardOtherwise(state.current).values()];
  if (pairs.length < 2) { await decide("accept"); return; }
  if (!(await acceptsEverywhere(pairs.flat()))) return;
  const tid = state.view.transcript_id;
  const done = [];
  try {
    for (const members of pairs) {
      const lead = state.order[members[0]];
      const ids = members.map((j) => state.order[j].id);
      const { data } = await api("POST", `/v1/transcripts/${enc(tid)}/decisions`,
        { action: "accept", suggestion_ids: ids, scope: scopeOf(lead) });
      applyChanged(data.suggestions);
      done.push(...ids);
    }
  } catch (err) {
    say(err.message, true);
  }
  if (!done.length) return;
  remember(done, `${pairs.length} ways heard → ${s.final} (${done.length}×)`);
  await loadHistory(tid);
  renderTranscript();
  select(nextToDecide(state.current) ?? state.current);
  refreshQueueCounts();
  say(`Accepted all ${done.length}: ${pairs.length} ways heard → ${s.final}, remembered`);
}

export function openGroup() {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) return;
  const key = pairKey(s);
  state.single = state.single === key ? null : key;
  select(state.current, false);
}

