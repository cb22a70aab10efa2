// Decisions: accept / edit / reject a suggestion (every occurrence of its pair at once), fix by hand, undo.

import { TYPES } from "/review/assets/names.js";
import { $, api, el, enc, isOpen, pairKey, say, state } from "/review/assets/core.js";
import { refreshQueueCounts } from "/review/assets/queue.js";
import { selectedSpan } from "/review/assets/select.js";
import { folded, groupOf, nextToDecide, openTranscript, renderTranscript, select } from "/review/assets/transcript.js";

const UNDO_DEPTH = 50;
const SAID = { accept: "Accepted", edit: "Edited", reject: "Rejected" };

function remember(ids, label) {
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
  try {
    const { data } = await api("POST", `/v1/transcripts/${enc(state.view.transcript_id)}/decisions`,
      { action: "reject", suggestion_ids: ids });
    applyChanged(data.suggestions);
  } catch (err) {
    say(err.message, true);
    return;
  }
  remember(ids, `${ids.length} low-confidence suggestions`);
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
  // one route whether the group holds one suggestion or many: the server decides both alike
  const { data } = await api("POST", `/v1/transcripts/${enc(tid)}/decisions`, { action, suggestion_ids: ids, ...extra });
  applyChanged(data.suggestions);
  const s = state.order[at];
  remember(ids, `${s.original} → ${s.final}${ids.length > 1 ? ` (${ids.length}×)` : ""}`);
  renderTranscript(); // the memory is read again when the next transcript opens, not on every key
  select(nextToDecide(at) ?? at);
  refreshQueueCounts();
  say(`${SAID[action]}${ids.length > 1 ? ` all ${ids.length}` : ""}${action === "reject" ? "" : ": remembered"}`);
  return true;
}

export async function decide(action) {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) { say("Already decided: u undoes it", true); return; }
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
    title: n > 1 ? `Edit all ${n}` : "Edit", original: `Heard: ${s.original}`, value: s.final, type: s.entity_type,
    submit: ({ final, type }) => send("edit", type === s.entity_type ? { final } : { final, entity_type: type }),
  });
}

// Undo the last decision (a group's at once): the suggestions as proposed, the memory as it was.
export async function undoLast() {
  const last = state.undo.pop();
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
export function ask({ title, original, value, type, submit }) {
  const dialog = $("#edit-dialog");
  const error = $("#edit-error");
  $("#edit-title").textContent = title;
  $("#edit-original").textContent = original;
  $("#edit-final").value = value;
  $("#edit-type").replaceChildren(...TYPES.map((t) => el("option", { value: t, selected: t === type }, t)));
  error.textContent = "";
  return new Promise((resolve) => {
    const done = (result) => { dialog.close(); resolve(result); };
    $("#edit-form").onsubmit = async (ev) => {
      ev.preventDefault();
      const final = $("#edit-final").value.trim();
      if (!final) { error.textContent = "Write the name as it should be."; return; }
      try {
        await submit({ final, type: $("#edit-type").value });
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

export async function fixSelection() {
  const span = selectedSpan();
  if (!span) { say("Select the words to fix first (mouse, or Shift+arrows from a suggestion).", true); return; }
  if (span.error) { say(span.error, true); return; }
  const seg = state.view.segments.find((s) => s.id === span.segmentId);
  await ask({
    title: "Fix by hand", original: `Heard: ${span.original}`, value: span.shown, type: "KEYWORD",
    submit: async ({ final, type }) => {
      const { data } = await api("POST", "/v1/corrections", {
        user_id: state.view.user_id, transcript_id: state.view.transcript_id, segment_id: span.segmentId,
        start_char: span.start, end_char: span.end, original: span.original, final, entity_type: type,
        segment_text: seg.text,
      });
      window.getSelection().removeAllRanges();
      remember([data.suggestion.id], `${span.original} → ${final}`);
      say(`Fixed: ${span.original} → ${final}, remembered`);
      await openTranscript(state.view.transcript_id, { suggestionId: data.suggestion.id, push: false });
    },
  });
}

export function openGroup() {
  const s = state.order[state.current];
  if (!s || !isOpen(s)) return;
  const key = pairKey(s);
  state.single = state.single === key ? null : key;
  select(state.current, false);
}

