// The memory view: what a user taught, until when it applies, and forgetting one of them.

import { TYPE_WORDS } from "/review/assets/names.js";
import { $, api, confirmed, el, enc, say, scopeWords, state } from "/review/assets/core.js";
import { showMode } from "/review/assets/review.js";

function memoryUser() {
  return state.view?.user_id || $("#user-filter").value.trim() || state.queue[state.queueIndex]?.user_id;
}

export async function openMemory(more = false, named = null, push = true) {
  const user = named || (more ? state.memoryUser : memoryUser());
  if (!user) { say("Open a transcript or filter by a user first.", true); return; }
  const params = new URLSearchParams({ limit: "50" });
  if (more && state.memoryNext) params.set("before", state.memoryNext);
  try {
    const { data, headers } = await api("GET", `/v1/users/${enc(user)}/corrections?${params}`);
    state.memory = more ? [...state.memory, ...data] : data;
    state.memoryNext = headers.get("X-Next-Before");
    state.memoryUser = user;
    if (!more) state.memoryIndex = 0;
    state.refusals = (await api("GET", `/v1/users/${enc(user)}/refusals`)).data;
    const vocab = (await api("GET", `/v1/users/${enc(user)}/vocabulary?format=json`)).data;
    $("#vocabulary").replaceChildren(...vocab.terms.filter((t) => t.sources.includes("promoted"))
      .map((t) => el("li", {}, `${t.term} · ${TYPE_WORDS[t.entity_type] || t.entity_type}`)));
    if (!$("#vocabulary").children.length) $("#vocabulary").append(el("li", { class: "hint" }, "Nothing promoted yet."));
  } catch (err) {
    say(err.message, true);
    return;
  }
  showMode("memory", push && !more);
  renderMemory();
}

// Until when a taught fix applies (teaching it again, or its being applied by itself, renews it), or why not.
function applies(c) {
  if (c.one_off && c.state === "applying") return "only where it was taught: what was written there, not what the words say";
  if (c.state === "applying") return `until ${new Date(c.applies_until).toLocaleDateString()}, renewed each time it applies`;
  if (c.state === "conflict") return conflictWords(c);
  return { promoted: "always (promoted)", expired: "expired: teach it again", superseded: "replaced" }[c.state] || "";
}

// Two finals taught for the same words and place: neither applies by itself until one is taught again.
function conflictWords(c) {
  const other = c.conflict_with;
  if (!other) return "in conflict: choose one";
  return `not by itself: you also taught “${c.original}” → ${other.final}` +
    (other.transcript_id ? ` in ${other.transcript_id}` : "") + "; accept or edit one to choose";
}

export function renderMemory() {
  $("#memory-user").textContent = state.memoryUser;
  const rows = state.memory.map((c, i) => {
    const forget = el("button", { type: "button" }, "Forget ", el("kbd", {}, "x"));
    forget.addEventListener("click", () => { state.memoryIndex = i; forgetSelected(); });
    const cell = (label, ...content) => el("td", { "data-label": label }, ...content);
    const tr = el("tr", { "data-i": String(i) },
      cell("Heard", [c.original, ...(c.also_heard || [])].join(" · ")), cell("Written", el("strong", {}, c.final)), cell("Type", TYPE_WORDS[c.entity_type] || c.entity_type),
      cell("How", c.action), cell("Times", String(c.frequency)),
      cell("When", new Date(c.updated_at).toLocaleDateString()), cell("Applies", applies(c)),
      cell("Where", c.one_off ? "the place it was taught, nowhere else" : scopeWords(c.scope, c.final, state.memoryUser)),
      cell("Taught in", c.transcript_id || ""),
      el("td", { class: "forget" }, forget));
    tr.classList.toggle("selected", i === state.memoryIndex);
    return tr;
  });
  if (!rows.length) rows.push(el("tr", {}, el("td", { colSpan: 10, class: "hint" }, "Nothing taught yet.")));
  $("#memory-table tbody").replaceChildren(...rows);
  $("#memory-more").hidden = !state.memoryNext;
  renderRefusals();
  document.querySelector("#memory-table tr.selected")?.scrollIntoView({ block: "nearest" });
}

// What the user refused: not proposed to them again until they take it back here (but where a sentence reads it).
function renderRefusals() {
  const rows = (state.refusals || []).map((r, i) => {
    const forget = el("button", { type: "button", "data-i": String(i) }, "Take back");
    forget.addEventListener("click", () => forgetRefusal(r));
    return el("tr", {}, el("td", {}, r.original), el("td", {}, r.final), el("td", {}, String(r.times)),
      el("td", {}, new Date(r.last_refused_at).toLocaleDateString()), el("td", {}, forget));
  });
  if (!rows.length) rows.push(el("tr", {}, el("td", { colSpan: 5, class: "hint" }, "Nothing refused.")));
  $("#refusals-table tbody").replaceChildren(...rows);
}

async function forgetRefusal(r) {
  if (!(await confirmed(`Take back the refusal of “${r.original} → ${r.final}”? It may be proposed to ` +
    `${state.memoryUser} again.`))) return;
  try {
    await api("DELETE", `/v1/users/${enc(state.memoryUser)}/refusals?` +
      new URLSearchParams({ original: r.original, final: r.final }));
  } catch (err) {
    say(err.message, true);
    return;
  }
  state.refusals = state.refusals.filter((x) => x !== r);
  renderRefusals();
  say(`Taken back: ${r.original} → ${r.final} may be proposed again`);
}

export async function forgetSelected() {
  const c = state.memory[state.memoryIndex];
  if (!c) return;
  if (!(await confirmed(`Forget “${c.original} → ${c.final}”? It will not come back for ${state.memoryUser}.`))) return;
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
