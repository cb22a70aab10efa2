// The queue of transcripts to review, last analysed first, a page of 100 at a time.

import { FOLD_BELOW, STATUS } from "/review/assets/names.js";
import { $, api, el, say, state } from "/review/assets/core.js";
import { loadProgress } from "/review/assets/history.js";
import { keepInView, openTranscript } from "/review/assets/transcript.js";

const QUEUE_PAGE = 100;

export async function loadQueue(more = false) {
  const user = $("#user-filter").value.trim();
  const params = new URLSearchParams({ limit: String(QUEUE_PAGE), offset: String(more ? state.queue.length : 0) });
  if (user) params.set("user_id", user);
  if ($("#pending-only").checked) params.set("pending", "true");
  let page;
  try {
    page = (await api("GET", `/v1/transcripts?${params}`)).data;
  } catch (err) {
    say(err.message, true);
    return;
  }
  state.queue = more ? [...state.queue, ...page] : page;
  $("#queue-more").hidden = page.length < QUEUE_PAGE;
  const openId = state.view?.transcript_id;
  state.queueIndex = Math.max(0, state.queue.findIndex((t) => t.transcript_id === openId));
  renderQueue();
  keepInView(); // the queue above the transcript changed height (a phone): the selection stays on screen
  loadProgress();
}

// What is left to decide in a transcript; one whose only pending suggestions are folded is not done either.
function badge(t) {
  const folded = t.counts[STATUS.PENDING] - t.counts.to_decide;
  if (t.counts.to_decide || !folded) return el("span", { class: "badge", title: "to decide" }, String(t.counts.to_decide));
  return el("span", { class: "badge folded", title: `${folded} folded, not yet seen` }, `${folded} folded`);
}

export function renderQueue() {
  const list = $("#queue");
  list.replaceChildren(...state.queue.map((t, i) => {
    const li = el("li", { "data-i": String(i), id: `q-${i}` },
      badge(t), " ",
      el("strong", {}, t.transcript_id),
      el("span", { class: "counts" },
        `${t.user_id} · ${t.counts[STATUS.AUTO_APPLIED]} auto-applied · ${new Date(t.analyzed_at).toLocaleString()}`));
    li.classList.toggle("selected", i === state.queueIndex);
    li.classList.toggle("open", t.transcript_id === state.view?.transcript_id);
    li.addEventListener("click", () => { state.queueIndex = i; openTranscript(t.transcript_id); });
    return li;
  }));
  if (!state.queue.length) list.append(el("li", { class: "hint" }, "Nothing to review."));
  list.setAttribute("aria-activedescendant", `q-${state.queueIndex}`);
  $(`#q-${state.queueIndex}`)?.scrollIntoView({ block: "nearest" });
}

export function moveQueue(step) {
  if (!state.queue.length) return;
  state.queueIndex = Math.min(state.queue.length - 1, Math.max(0, state.queueIndex + step));
  renderQueue();
}

export function stepTranscript(step) {
  if (!state.queue.length) return;
  const at = state.queue.findIndex((t) => t.transcript_id === state.view?.transcript_id);
  const next = Math.min(state.queue.length - 1, Math.max(0, (at < 0 ? -step : at) + step));
  state.queueIndex = next;
  openTranscript(state.queue[next].transcript_id);
}

// The open transcript's counts in the queue follow its decisions; the progress line once it has nothing left.
export function refreshQueueCounts() {
  const t = state.queue.find((q) => q.transcript_id === state.view?.transcript_id);
  if (t) {
    const before = t.counts.to_decide;
    t.counts[STATUS.PENDING] = state.order.filter((s) => s.status === STATUS.PENDING).length;
    t.counts[STATUS.AUTO_APPLIED] = state.order.filter((s) => s.status === STATUS.AUTO_APPLIED).length;
    t.counts.to_decide = state.order.filter((s) => s.status === STATUS.PENDING && s.confidence >= FOLD_BELOW).length;
    renderQueue();
    if ((before > 0) !== (t.counts.to_decide > 0)) loadProgress();
  }
}
