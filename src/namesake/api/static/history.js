// What the server keeps of the review: the open transcript's decisions (undo survives a reload), and how far the
// queue has come ("3 of 12 transcripts reviewed").

import { $, api, el, enc, say, state } from "/review/assets/core.js";

const ACTION_WORDS = { accept: "accepted", edit: "edited", reject: "rejected", manual: "fixed by hand" };
const SCOPE_SHORT = { transcript: "this transcript", list: "calls with it on their list", user: "all calls" };

export async function loadHistory(transcriptId) {
  try {
    state.history = (await api("GET", `/v1/transcripts/${enc(transcriptId)}/history`)).data;
  } catch {
    state.history = [];
  }
  renderHistory();
}

export function renderHistory() {
  const standing = state.history.filter((d) => !d.undone_at).length;
  const items = state.history.map((d) => el("li", { class: d.undone_at ? "undone" : "" },
    el("span", { class: "what" }, d.label), " ",
    el("span", { class: "meta" }, [ACTION_WORDS[d.action] || d.action,
      d.scope ? `teaches ${SCOPE_SHORT[d.scope]}` : null,
      new Date(d.created_at).toLocaleTimeString(), d.undone_at ? "undone" : null].filter(Boolean).join(" · "))));
  const undone = state.history.length - standing; // the header counts every entry of the list below it
  $("#history-count").textContent = `${standing} decision${standing === 1 ? "" : "s"}` + (undone ? `, ${undone} undone` : "");
  $("#history-list").replaceChildren(...(items.length ? items : [el("li", { class: "hint" }, "Nothing decided yet.")]));
  $("#history").hidden = !state.view;
}

// The newest decision still standing on the open transcript, from the server: what u undoes after a reload.
export function lastStanding() {
  const d = state.history.find((x) => !x.undone_at);
  return d && state.view ? { transcriptId: state.view.transcript_id, ids: d.suggestion_ids, label: d.label } : null;
}

export async function loadProgress() {
  const user = $("#user-filter").value.trim();
  try {
    const p = (await api("GET", `/v1/review/progress${user ? `?user_id=${enc(user)}` : ""}`)).data;
    $("#progress").textContent = p.transcripts
      ? `${p.reviewed} of ${p.transcripts} transcripts reviewed` : "No transcript to review.";
  } catch (err) {
    say(err.message, true);
  }
}
