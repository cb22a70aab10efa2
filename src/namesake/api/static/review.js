// The review workspace: a queue of transcripts, suggestions marked in place, the user's memory.
// Plain modules, no dependencies, no request to another host; every action has a key.

import { STATUS } from "/review/assets/names.js";

const $ = (sel) => document.querySelector(sel);
const KEY_STORE = "namesake.key"; // sessionStorage: the key lives as long as the tab
// in the order a reviewer finds them telling: the first three present are shown as "why"
const SIGNAL_LABELS = {
  remembered: "you fixed this before",
  lm_gain: "reads better in its sentence",
  memory_bonus: "the memory backs it",
  rag: "in the meeting's name list",
  edit: "spelled almost the same",
  phonetic: "sounds the same",
  ctx_gain: "fits the words around it",
  frequency: "said often in this meeting",
  final_elsewhere: "written this way elsewhere here",
  acronym: "an acronym",
  capitalised: "capitalised like a name",
  llm: "the LLM agrees",
  asr: "the recogniser was unsure",
  spoken_form: "the written form of what was said",
  length: "a long name",
};

const WHY_ORDER = Object.keys(SIGNAL_LABELS);

const state = {
  key: sessionStorage.getItem(KEY_STORE) || "",
  queue: [], queueIndex: 0,
  view: null, order: [], current: -1,
  memory: [], memoryUser: null, memoryNext: null, memoryIndex: 0,
  taught: new Map(), // "original|final" (lowercased) → correction, for "remembered from your fix on …"
  mode: "transcript",
  chain: Promise.resolve(),
};

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.key}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => null);
  if (!r.ok) throw new ApiError(r.status, data?.error?.message || `${r.status} ${r.statusText}`);
  return { data, headers: r.headers };
}

function say(text, bad = false) {
  const el = $("#status");
  el.textContent = text;
  el.className = `status shown${bad ? " bad" : ""}`;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { el.className = "status"; }, bad ? 5000 : 2200);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

const cps = (text) => Array.from(text); // offsets are code points, as the API counts them
const enc = encodeURIComponent;

// ---- sign in ------------------------------------------------------------------------------

async function signIn(key) {
  state.key = key;
  try {
    await api("GET", "/v1/transcripts?limit=1");
  } catch (err) {
    state.key = "";
    sessionStorage.removeItem(KEY_STORE);
    $("#signin-error").textContent = err.status === 401 || err.status === 403
      ? "This key is not allowed." : `Cannot sign in: ${err.message}`;
    return false;
  }
  sessionStorage.setItem(KEY_STORE, key);
  $("#signin").hidden = true;
  $("#app").hidden = false;
  $("#tabs").hidden = false;
  showMode("transcript");
  await loadQueue();
  $("#queue").focus();
  return true;
}

function signOut() {
  sessionStorage.removeItem(KEY_STORE);
  location.reload();
}

// ---- queue --------------------------------------------------------------------------------

const QUEUE_PAGE = 100;

async function loadQueue(more = false) {
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
}

function renderQueue() {
  const list = $("#queue");
  list.replaceChildren(...state.queue.map((t, i) => {
    const li = el("li", { "data-i": String(i), id: `q-${i}` },
      el("span", { class: "badge", title: "pending" }, String(t.counts[STATUS.PENDING])), " ",
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

function moveQueue(step) {
  if (!state.queue.length) return;
  state.queueIndex = Math.min(state.queue.length - 1, Math.max(0, state.queueIndex + step));
  renderQueue();
}

// ---- transcript ---------------------------------------------------------------------------

async function openTranscript(id, keepPosition = false) {
  let view;
  try {
    view = (await api("GET", `/v1/transcripts/${enc(id)}`)).data;
  } catch (err) {
    say(err.message, true);
    return;
  }
  const previous = keepPosition ? state.order[state.current]?.id : null;
  state.view = view;
  const segIndex = new Map(view.segments.map((s, i) => [s.id, i]));
  state.order = [...view.suggestions].sort((a, b) =>
    (segIndex.get(a.segment_id) ?? 1e9) - (segIndex.get(b.segment_id) ?? 1e9) || a.start_char - b.start_char);
  await loadTaught(view.user_id);
  const back = state.order.findIndex((s) => s.id === previous);
  state.current = back >= 0 ? back : firstOpen(0, 1);
  showMode("transcript");
  renderTranscript();
  renderQueue();
  $("#segments").focus({ preventScroll: true }); // j / k now move through this transcript's suggestions
}

// The next (step 1) or previous (-1) suggestion still pending, past the auto-applied and decided ones.
function stepPending(step) {
  for (let i = state.current + step; i >= 0 && i < state.order.length; i += step) {
    if (state.order[i].status === STATUS.PENDING) return select(i);
  }
  say(step > 0 ? "No pending suggestion after this one" : "No pending suggestion before this one");
}

function firstOpen(from, step) {
  for (let i = from; i >= 0 && i < state.order.length; i += step) {
    if (state.order[i].status === STATUS.PENDING) return i;
  }
  return state.order.length ? Math.min(Math.max(from, 0), state.order.length - 1) : -1;
}

function renderTranscript() {
  const v = state.view;
  const count = (status) => state.order.filter((s) => s.status === status).length;
  const pending = count(STATUS.PENDING);
  const decided = count(STATUS.VALIDATED) + count(STATUS.REJECTED);
  $("#transcript-title").textContent = v.transcript_id;
  $("#transcript-meta").textContent = `${v.user_id} · ${v.segments.length} segments · ` +
    `${decided} of ${decided + pending} decided · ${state.order.length} suggestions`;
  const bySegment = new Map();
  state.order.forEach((s, i) => {
    if (!bySegment.has(s.segment_id)) bySegment.set(s.segment_id, []);
    bySegment.get(s.segment_id).push(i);
  });
  const frag = document.createDocumentFragment();
  for (const seg of v.segments) frag.append(renderSegment(seg, bySegment.get(seg.id) || []));
  $("#segments").replaceChildren(frag);
  select(state.current, false);
}

function renderSegment(seg, indexes) {
  const chars = cps(seg.text);
  const body = el("div", { class: "text", "data-segment": seg.id });
  let at = 0;
  const plain = (from, to) => {
    if (to > from) body.append(el("span", { class: "t", "data-o": String(from) }, chars.slice(from, to).join("")));
  };
  for (const i of indexes) {
    const s = state.order[i];
    if (s.start_char < at || s.end_char > chars.length) continue; // overlapping or stale: listed, not drawn
    plain(at, s.start_char);
    const shown = s.status === STATUS.AUTO_APPLIED || s.status === STATUS.VALIDATED ? s.final : s.original;
    const mark = el("mark", { class: `s ${s.status}`, "data-i": String(i), id: `s-${i}`,
      title: `${s.original} → ${s.final}` }, shown);
    mark.addEventListener("click", () => select(i));
    body.append(mark);
    if (s.status === STATUS.PENDING) body.append(el("span", { class: "proposal" }, `→ ${s.final}`));
    at = s.end_char;
  }
  plain(at, chars.length);
  return el("div", { class: "segment" }, el("span", { class: "sid" }, seg.id), body);
}

function select(i, scroll = true) {
  document.querySelectorAll("mark.current").forEach((m) => m.classList.remove("current"));
  state.current = i;
  const s = state.order[i];
  if (!s) {
    $("#detail").replaceChildren(el("p", { class: "hint" },
      state.view ? "No suggestion in this transcript. Select words and press f to fix them by hand." : ""));
    return;
  }
  const mark = $(`#s-${i}`);
  mark?.classList.add("current");
  if (scroll) mark?.scrollIntoView({ block: "center" });
  renderDetail(s);
}

function why(s) {
  const signals = s.signals || {};
  const reasons = Object.entries(signals)
    .filter(([k, v]) => SIGNAL_LABELS[k] && v > 0)
    .sort((a, b) => WHY_ORDER.indexOf(a[0]) - WHY_ORDER.indexOf(b[0])) // the telling reasons first
    .slice(0, 3)
    .map(([k, v]) => el("li", {}, `${SIGNAL_LABELS[k]} (${Number(v).toFixed(2)})`));
  if (signals.lm_gain < 0) { // the language model read the sentence and prefers the words as heard
    reasons.push(el("li", { class: "against" }, `against: reads better as heard (${Number(signals.lm_gain).toFixed(2)})`));
  }
  return reasons;
}

function renderDetail(s) {
  const box = $("#detail");
  const open = s.status === STATUS.PENDING || s.status === STATUS.AUTO_APPLIED;
  const taught = state.taught.get(`${s.original.toLowerCase()}|${s.final.toLowerCase()}`);
  const parts = [
    el("h2", {}, `Suggestion ${state.current + 1} of ${state.order.length}`),
    el("p", { class: "change" }, el("del", {}, s.original), " → ", el("ins", {}, s.final)),
    el("dl", {},
      el("dt", {}, "Status"), el("dd", { id: "detail-status" }, s.status.replace("_", " ")),
      el("dt", {}, "Type"), el("dd", {}, s.entity_type),
      el("dt", {}, "Confidence"), el("dd", {}, Number(s.confidence).toFixed(2)),
      el("dt", {}, "From"), el("dd", {}, s.source)),
  ];
  if (taught) {
    parts.push(el("p", { class: "remembered" },
      `Remembered from your fix on ${new Date(taught.updated_at).toLocaleDateString()}` +
      (taught.transcript_id ? ` in ${taught.transcript_id}` : "") + ` (${taught.frequency}×).`));
  }
  const reasons = why(s);
  if (reasons.length) parts.push(el("h3", {}, "Why"), el("ul", { class: "why" }, ...reasons));
  if (open) {
    const button = (label, key, fn) => {
      const b = el("button", { type: "button" }, `${label} `, el("kbd", {}, key));
      b.addEventListener("click", fn);
      return b;
    };
    parts.push(el("div", { class: "actions" },
      button("Accept", "a", () => decide("accept")),
      button("Edit", "e", () => editCurrent()),
      button(s.status === STATUS.AUTO_APPLIED ? "Revert" : "Reject", "r", () => decide("reject"))));
  }
  box.replaceChildren(...parts);
}

async function decide(action, final) {
  const s = state.order[state.current];
  if (!s || !(s.status === STATUS.PENDING || s.status === STATUS.AUTO_APPLIED)) return;
  const body = { transcript_id: state.view.transcript_id };
  if (action === "edit") body.final = final;
  try {
    const { data } = await api("POST", `/v1/suggestions/${enc(s.id)}/${action}`, body);
    state.order[state.current] = data.suggestion;
  } catch (err) {
    say(err.message, true);
    return;
  }
  const at = state.current;
  renderTranscript(); // the memory is read again when the next transcript opens, not on every key
  const next = firstOpen(at + 1, 1);
  select(state.order[next]?.status === STATUS.PENDING ? next : firstOpen(0, 1));
  refreshQueueCounts();
  say({ accept: "Accepted: remembered", edit: "Edited: remembered", reject: "Rejected" }[action]);
}

function refreshQueueCounts() {
  const t = state.queue.find((q) => q.transcript_id === state.view.transcript_id);
  if (t) {
    t.counts[STATUS.PENDING] = state.order.filter((s) => s.status === STATUS.PENDING).length;
    t.counts[STATUS.AUTO_APPLIED] = state.order.filter((s) => s.status === STATUS.AUTO_APPLIED).length;
    renderQueue();
  }
}

function ask({ title, original, value, withType }) {
  const dialog = $("#edit-dialog");
  $("#edit-title").textContent = title;
  $("#edit-original").textContent = original;
  $("#edit-final").value = value;
  $("#edit-type-row").hidden = !withType;
  return new Promise((resolve) => {
    const done = (result) => { dialog.close(); resolve(result); };
    $("#edit-form").onsubmit = (ev) => {
      ev.preventDefault();
      const final = $("#edit-final").value.trim();
      done(final ? { final, type: $("#edit-type").value } : null);
    };
    $("#edit-cancel").onclick = () => done(null);
    dialog.oncancel = () => resolve(null);
    dialog.showModal();
    $("#edit-final").select();
  });
}

async function editCurrent() {
  const s = state.order[state.current];
  if (!s || !(s.status === STATUS.PENDING || s.status === STATUS.AUTO_APPLIED)) return;
  const answer = await ask({ title: "Edit", original: `Heard: ${s.original}`, value: s.final, withType: false });
  if (answer) await decide("edit", answer.final);
}

// A selection inside one stretch of plain text: its code-point span in the segment as analysed.
function selectedSpan() {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
  const range = sel.getRangeAt(0);
  const piece = (node) => (node.nodeType === Node.TEXT_NODE ? node.parentElement : node)?.closest("span.t");
  const start = piece(range.startContainer);
  if (!start || start !== piece(range.endContainer)) return { error: "Select words outside a suggestion, in one segment." };
  const text = start.textContent;
  let a = cps(text.slice(0, range.startOffset)).length;
  let b = cps(text.slice(0, range.endOffset)).length;
  const chars = cps(text);
  while (a < b && /\s/.test(chars[a])) a += 1;
  while (b > a && /\s/.test(chars[b - 1])) b -= 1;
  if (a === b) return null;
  const base = Number(start.dataset.o);
  const segmentId = start.closest("[data-segment]").dataset.segment;
  return { segmentId, start: base + a, end: base + b, original: chars.slice(a, b).join("") };
}

async function fixSelection() {
  const span = selectedSpan();
  if (!span) { say("Select the words to fix first.", true); return; }
  if (span.error) { say(span.error, true); return; }
  const answer = await ask({ title: "Fix by hand", original: `Heard: ${span.original}`, value: span.original, withType: true });
  if (!answer) return;
  const seg = state.view.segments.find((s) => s.id === span.segmentId);
  try {
    await api("POST", "/v1/corrections", {
      user_id: state.view.user_id, transcript_id: state.view.transcript_id, segment_id: span.segmentId,
      start_char: span.start, end_char: span.end, original: span.original, final: answer.final,
      entity_type: answer.type, segment_text: seg.text,
    });
  } catch (err) {
    say(err.message, true);
    return;
  }
  window.getSelection().removeAllRanges();
  say(`Fixed: ${span.original} → ${answer.final}, remembered`);
  await openTranscript(state.view.transcript_id, true);
}

function stepTranscript(step) {
  if (!state.queue.length) return;
  const at = state.queue.findIndex((t) => t.transcript_id === state.view?.transcript_id);
  const next = Math.min(state.queue.length - 1, Math.max(0, (at < 0 ? -step : at) + step));
  state.queueIndex = next;
  openTranscript(state.queue[next].transcript_id);
}

// ---- memory -------------------------------------------------------------------------------

async function loadTaught(user) {
  try {
    const { data } = await api("GET", `/v1/users/${enc(user)}/corrections?limit=1000`);
    state.taught = new Map(data.map((c) => [`${c.original.toLowerCase()}|${c.final.toLowerCase()}`, c]));
  } catch {
    state.taught = new Map();
  }
}

function memoryUser() {
  return state.view?.user_id || $("#user-filter").value.trim() || state.queue[state.queueIndex]?.user_id;
}

async function openMemory(more = false) {
  const user = memoryUser();
  if (!user) { say("Open a transcript or filter by a user first.", true); return; }
  const params = new URLSearchParams({ limit: "50" });
  if (more && state.memoryNext) params.set("before", state.memoryNext);
  try {
    const { data, headers } = await api("GET", `/v1/users/${enc(user)}/corrections?${params}`);
    state.memory = more ? [...state.memory, ...data] : data;
    state.memoryNext = headers.get("X-Next-Before");
    state.memoryUser = user;
    if (!more) state.memoryIndex = 0;
    const vocab = (await api("GET", `/v1/users/${enc(user)}/vocabulary?format=json`)).data;
    $("#vocabulary").replaceChildren(...vocab.terms.filter((t) => t.sources.includes("promoted"))
      .map((t) => el("li", {}, `${t.term} · ${t.entity_type}`)));
    if (!$("#vocabulary").children.length) $("#vocabulary").append(el("li", { class: "hint" }, "Nothing promoted yet."));
  } catch (err) {
    say(err.message, true);
    return;
  }
  showMode("memory");
  renderMemory();
}

// Until when a taught fix applies (teaching it again renews it), or why it no longer does.
function applies(c) {
  if (c.state === "applying") return `until ${new Date(c.applies_until).toLocaleDateString()}`;
  return { promoted: "always (promoted)", expired: "expired: teach it again", superseded: "replaced" }[c.state] || "";
}

function renderMemory() {
  $("#memory-user").textContent = state.memoryUser;
  const rows = state.memory.map((c, i) => {
    const forget = el("button", { type: "button" }, "Forget ", el("kbd", {}, "x"));
    forget.addEventListener("click", () => { state.memoryIndex = i; forgetSelected(); });
    const tr = el("tr", { "data-i": String(i) },
      el("td", {}, c.original), el("td", {}, el("strong", {}, c.final)), el("td", {}, c.entity_type),
      el("td", {}, c.action), el("td", {}, String(c.frequency)),
      el("td", {}, new Date(c.updated_at).toLocaleDateString()), el("td", {}, applies(c)),
      el("td", {}, c.transcript_id || ""), el("td", {}, forget));
    tr.classList.toggle("selected", i === state.memoryIndex);
    return tr;
  });
  if (!rows.length) rows.push(el("tr", {}, el("td", { colSpan: 9, class: "hint" }, "Nothing taught yet.")));
  $("#memory-table tbody").replaceChildren(...rows);
  $("#memory-more").hidden = !state.memoryNext;
  document.querySelector("#memory-table tr.selected")?.scrollIntoView({ block: "nearest" });
}

async function forgetSelected() {
  const c = state.memory[state.memoryIndex];
  if (!c) return;
  $("#confirm-text").textContent = `Forget “${c.original} → ${c.final}”? It will not come back for ${state.memoryUser}.`;
  const dialog = $("#confirm");
  dialog.returnValue = "";
  dialog.showModal();
  $("#confirm-ok").focus();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
  if (dialog.returnValue !== "ok") return;
  try {
    const { data } = await api("DELETE", `/v1/users/${enc(state.memoryUser)}/corrections/${c.id}`);
    say(`Forgotten: ${data.original} → ${data.final}`);
  } catch (err) {
    say(err.message, true);
    return;
  }
  state.memory.splice(state.memoryIndex, 1);
  state.memoryIndex = Math.min(state.memoryIndex, state.memory.length - 1);
  renderMemory();
}

function showMode(mode) {
  state.mode = mode;
  $("#memory-view").hidden = mode !== "memory";
  $("#transcript-view").hidden = mode !== "transcript";
  $("#detail").hidden = mode !== "transcript";
  $("#app").classList.toggle("memory", mode === "memory");
  $("#tab-transcript").setAttribute("aria-current", mode === "transcript" ? "page" : "false");
  $("#tab-memory").setAttribute("aria-current", mode === "memory" ? "page" : "false");
}

// ---- keys ---------------------------------------------------------------------------------

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || document.querySelector("dialog[open]")) return;
  const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName);
  if (typing) {
    if (ev.target.id === "user-filter" && (ev.key === "Escape" || ev.key === "Enter")) {
      ev.preventDefault();
      ev.target.blur();
      state.chain = state.chain.then(() => loadQueue()).then(() => $("#queue").focus());
    }
    return;
  }
  if ($("#app").hidden) return;
  const inQueue = document.activeElement === $("#queue");
  const keys = {
    "?": () => $("#help").showModal(),
    "/": () => $("#user-filter").focus(),
    m: () => openMemory(),
    t: () => showMode("transcript"),
    n: () => stepTranscript(1),
    p: () => stepTranscript(-1),
  };
  const move = (step) => {
    if (state.mode === "memory") {
      state.memoryIndex = Math.min(state.memory.length - 1, Math.max(0, state.memoryIndex + step));
      renderMemory();
    } else if (inQueue || !state.view) moveQueue(step);
    else if (state.order.length) select(Math.min(state.order.length - 1, Math.max(0, state.current + step)));
  };
  keys.j = keys.ArrowDown = () => move(1);
  keys.k = keys.ArrowUp = () => move(-1);
  if (state.mode === "memory") {
    keys.x = keys.Delete = () => forgetSelected();
  } else {
    keys.Enter = () => state.queue[state.queueIndex] && openTranscript(state.queue[state.queueIndex].transcript_id);
    keys.J = keys["]"] = () => state.view && stepPending(1);
    keys.K = keys["["] = () => state.view && stepPending(-1);
    keys.a = () => decide("accept");
    keys.e = () => editCurrent();
    keys.r = () => decide("reject");
    keys.f = () => fixSelection();
  }
  const action = keys[ev.key];
  if (action) {
    ev.preventDefault();
    // one after another: a key pressed while a decision is on its way acts on the suggestion that follows
    state.chain = state.chain.then(action).catch((err) => say(String(err), true));
  }
}

function init() {
  $("#signin-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("#key").value.trim()); });
  $("#sign-out").addEventListener("click", signOut);
  $("#tab-memory").addEventListener("click", () => openMemory());
  $("#tab-transcript").addEventListener("click", () => showMode("transcript"));
  $("#help-open").addEventListener("click", () => $("#help").showModal());
  $("#memory-more").addEventListener("click", () => openMemory(true));
  $("#queue-more").addEventListener("click", () => loadQueue(true));
  $("#pending-only").addEventListener("change", () => loadQueue());
  $("#user-filter").addEventListener("change", () => loadQueue());
  $("#segments").tabIndex = -1;
  document.addEventListener("keydown", onKey);
  if (state.key) signIn(state.key);
}

init();
