// The selected suggestion, explained: what it changes, why, where its lesson applies next, what one key decides.

import { AGAINST, MEASURED, REASONS, SOURCES, STATUS, TYPE_WORDS } from "/review/assets/names.js";
import { $, SCOPE_ORDER, api, el, inSentence, isOpen, memoryKey, pairKey, scopeWords, state } from "/review/assets/core.js";

const WHY_ORDER = Object.keys(REASONS);
const GROUP_SHOWN = 8; // occurrences listed with their sentence before one key decides them all
const SAID_AROUND = 48; // characters of the sentence shown on each side of an occurrence

// Applied because the user taught it: the page says so rather than showing a low score.
export const fromMemory = (s) => s.source === "memory" || (s.signals?.remembered ?? 0) > 0;

// The reasons that support the suggestion (the telling ones first), and the one that argues against it.
function why(s) {
  const signals = s.signals || {};
  const said = (k, v) => (MEASURED.includes(k) && v <= 1 ? `${REASONS[k]} (${Math.round(v * 100)}%)` : REASONS[k]);
  const reasons = Object.entries(signals)
    .filter(([k, v]) => REASONS[k] && v > 0)
    .sort((a, b) => WHY_ORDER.indexOf(a[0]) - WHY_ORDER.indexOf(b[0]))
    .slice(0, 3)
    .map(([k, v]) => el("li", {}, said(k, v)));
  // the first reader present speaks (the language model before word-pair counts), and only if it objects
  const against = Object.keys(AGAINST).find((k) => k in signals);
  if (against && signals[against] < 0) reasons.push(el("li", { class: "against" }, `against: ${AGAINST[against]}`));
  return reasons;
}

// Where the lesson of accepting or editing this suggestion applies next: the reviewer's choice, else the default.
export const scopeOf = (s) => state.scopes.get(pairKey(s)) || state.defaults.get(pairKey(s))?.scope || "user";

export async function loadDefaultScope(original, final) {
  const key = pairKey({ original, final });
  if (!state.defaults.has(key)) {
    const params = new URLSearchParams({ original, final, transcript_id: state.view.transcript_id });
    try {
      state.defaults.set(key, (await api("GET", `/v1/review/scope?${params}`)).data);
    } catch {
      state.defaults.set(key, { scope: "user", everyday: false });
    }
  }
  return state.defaults.get(key);
}

// The scope choice: a select (s cycles it), and why the default is narrow when it is.
export function scopeChoice(original, final, chosen, onChange, key = true) {
  const select = el("select", { id: "scope-select", "aria-label": "Where it applies next" },
    ...SCOPE_ORDER.map((v) => el("option", { value: v, selected: v === chosen }, scopeWords(v, final, state.view.user_id))));
  select.addEventListener("change", () => onChange(select.value));
  const box = el("p", { class: "scope", id: "detail-scope" }, el("label", { htmlFor: "scope-select" }, "Applies next to "),
    select, ...(key ? [" ", el("kbd", {}, "s")] : []));
  const dflt = state.defaults.get(pairKey({ original, final }));
  if (dflt?.everyday) {
    box.append(el("span", { class: "scope-note" },
      `“${original}” is made of everyday words: by default it comes back only where the name list has ${final}.`));
  }
  return box;
}

// Each occurrence of the group with its sentence: one key decides them all, so the reviewer sees where they are.
function occurrences(group) {
  const texts = new Map(state.view.segments.map((g) => [g.id, g.text]));
  const items = group.slice(0, GROUP_SHOWN).map((j) => {
    const o = state.order[j];
    return el("li", {}, ...inSentence(texts.get(o.segment_id) || "", o.start_char, o.end_char, SAID_AROUND));
  });
  if (group.length > GROUP_SHOWN) items.push(el("li", { class: "hint" }, `and ${group.length - GROUP_SHOWN} more`));
  return el("ol", { class: "occurrences", id: "detail-occurrences" }, ...items);
}

function heading(s, position) {
  if (s.status === STATUS.PENDING) return position.total ? `To decide: ${position.at} of ${position.total}` : "To decide";
  if (s.status === STATUS.AUTO_APPLIED) return "Applied without review";
  return s.status === STATUS.VALIDATED ? "Accepted" : "Rejected";
}

function sureness(s, taught, folded) {
  if (s.status === STATUS.AUTO_APPLIED && fromMemory(s)) {
    return `applied: you taught it${taught ? ` (${taught.frequency}×)` : ""}`;
  }
  const pct = `${Math.round(Number(s.confidence) * 100)}%`;
  return folded ? `${pct}, low: folded` : pct;
}

const detailScope = (s) => scopeChoice(s.original, s.final, scopeOf(s), (v) => { state.scopes.set(pairKey(s), v); });

// The selected suggestion's scope choice drawn again (its default arrived), nothing else replaced.
export function redrawScope(s) {
  $("#detail-scope")?.replaceWith(detailScope(s));
  const r = state.reach.get(reachKey(s));
  if (r) drawReach(s, r);
}

// Where changes stand open, here and in the user's other calls, as the server counts them: { pairs, other_calls }.
export async function reachOf(pairs) {
  const asked = pairs.map(({ original, final }) => ({ original, final }));
  return (await api("POST", "/v1/review/reach", { transcript_id: state.view.transcript_id, pairs: asked })).data;
}

const reachKey = (s) => `${state.view?.transcript_id}|${pairKey(s)}`;

// The selected change's reach, asked once until the next decision; null when the server could not say.
export async function loadReach(s) {
  if (!state.reach.has(reachKey(s))) {
    try {
      state.reach.set(reachKey(s), (await reachOf([s])).pairs[0]);
    } catch {
      return null;
    }
  }
  return state.reach.get(reachKey(s));
}

const places = (n) => `${n} ${n === 1 ? "place" : "places"}`;

// Before deciding: how many places this change is open at here, and in how many of the user's other calls.
export function reachWords(s, r) {
  const here = `Open at ${places(r.here)} here`;
  if (!r.elsewhere) return `${here}; none of your other calls has it.`;
  const follows = scopeOf(s) === "transcript"
    ? "a reject reaches them when they are analysed again (an accept is for this call only)"
    : "an accept's lesson or a reject reaches them when they are analysed again";
  return `${here} and at ${places(r.elsewhere)} in ${r.other_calls} of your other calls: ${follows}.`;
}

export function drawReach(s, r) {
  const line = $("#detail-reach");
  if (line) line.textContent = reachWords(s, r);
}

export function button(label, key, extra = "") {
  const b = el("button", { type: "button", "data-key": key, class: extra }, `${label} `, el("kbd", {}, key));
  b.addEventListener("click", () => document.dispatchEvent(new KeyboardEvent("keydown", { key })));
  return b;
}

const letters = (t) => t.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

// What a reject will refuse next time: this pair, here and in any wider span; never a narrower one. A span that
// ate neighbouring words says so: only it is refused, the name inside it stays proposable.
export function rejectTeaches(s) {
  const final = letters(s.final);
  const inName = (w) => final.includes(letters(w)) || letters(w).includes(final);
  const words = s.original.split(/\s+/).filter((w) => letters(w));
  const eaten = words.some(inName) ? words.filter((w) => !inName(w)) : []; // the name kept, its neighbours gone
  const pair = `“${s.original}” → ${s.final}`;
  if (!eaten.length) return `A reject refuses ${pair} for your next calls too.`;
  return `A reject refuses only ${pair} (it would delete “${eaten.join(" ")}”): the name inside it stays proposable.`;
}

export function renderDetail(s, { group, position, folded, single, done, otherwise }) {
  const open = isOpen(s);
  const taught = state.taught.get(memoryKey(s.original, s.final));
  const parts = [
    el("h2", {}, heading(s, position)),
    el("p", { class: "change" }, el("del", {}, s.original), " → ", el("ins", {}, s.final)),
    el("dl", {},
      el("dt", {}, "Type"), el("dd", {}, TYPE_WORDS[s.entity_type] || s.entity_type),
      el("dt", {}, "Sureness"), el("dd", { "data-confidence": String(s.confidence) }, sureness(s, taught, folded)),
      el("dt", {}, "From"), el("dd", {}, SOURCES[s.source] || s.source)),
  ];
  if (taught) {
    parts.push(el("p", { class: "remembered" },
      `Remembered: you taught it ${taught.frequency}×, last on ${new Date(taught.updated_at).toLocaleDateString()}` +
      (taught.transcript_id ? ` in ${taught.transcript_id}` : "") + "."));
    const left = s.signals?.remembered_left_alone ?? 0;
    if (left > 0 && s.status === "pending") {
      parts.push(el("p", { class: "hint", id: "detail-left-alone" },
        `Where you taught it you left “${s.original}” as heard ${left}×, so here it waits for you.`));
    }
    if (taught.state === "conflict" && taught.conflict_with) {
      const other = taught.conflict_with;
      parts.push(el("p", { class: "refused", id: "detail-conflict" },
        `You also taught “${s.original}” → ${other.final}` + (other.transcript_id ? ` in ${other.transcript_id}` : "") +
        `: neither applies by itself. Accept keeps ${s.final}; edit to ${other.final} chooses that one.`));
    }
  }
  const whole = state.view.completions?.[s.id];
  if (whole) {
    parts.push(el("p", { class: "group", id: "detail-whole" },
      `Part of ${whole.final} is still as heard: “${whole.original}” → ${whole.final} fixes the whole name and ` +
      `teaches that${open ? "" : " instead"}. `, button("Complete", "w")));
  }
  const refused = state.refused.get(memoryKey(s.original, s.final));
  if (refused) {
    parts.push(el("p", { class: "refused" }, `You refused it ${refused.times}×, last on ` +
      `${new Date(refused.last_refused_at).toLocaleDateString()}` + (taught ? ": the signals alone decide." : ".")));
  }
  if (open) parts.push(el("p", { class: "hint", id: "detail-reject-teaches" }, rejectTeaches(s)),
    el("p", { class: "hint", id: "detail-reach" }, "Counting where it is open…"));
  const reasons = why(s);
  if (reasons.length) parts.push(el("h3", {}, "Why"), el("ul", { class: "why" }, ...reasons));
  if (open && (group.length > 1 || single)) {
    parts.push(el("p", { class: "group", id: "detail-group" }, single
      ? "One at a time: a key decides this occurrence only (g decides them all again)."
      : `${group.length} occurrences: a key decides all of them (g: one at a time).`));
    if (!single) parts.push(occurrences(group));
  }
  if (open && otherwise?.size > 1) {
    const heard = [...otherwise.values()].map((js) => `“${state.order[js[0]].original}”`);
    const places = [...otherwise.values()].reduce((n, js) => n + js.length, 0);
    parts.push(el("p", { class: "group", id: "detail-otherwise" },
      `${s.final} is also proposed where ${heard.length} ways were heard (${heard.join(", ")}; ${places} places): `,
      el("kbd", {}, "A"), " accepts them all."));
  }
  if (open) {
    parts.push(detailScope(s));
    parts.push(el("div", { class: "actions" }, button("Accept", "a"), button("Edit", "e"),
      button(s.status === STATUS.AUTO_APPLIED ? "Revert" : "Reject", "r"), button("Undo", "u")));
  } else {
    parts.push(el("p", { class: "hint" }, "Decided. u (or Ctrl+Z) undoes your last decisions."),
      el("div", { class: "actions" }, button("Undo", "u")));
  }
  if (done) parts.unshift(done);
  $("#detail").replaceChildren(...parts);
  renderBar(s, open, open && !single ? group.length : 1);
}

// The phone's action bar: the selected change and its buttons, always at hand under the thumb; when one tap decides
// several places (the panel's "N occurrences" is in the closed sheet), the bar says so first.
function renderBar(s, open, places) {
  $("#action-bar").hidden = !state.view;
  const count = places > 1 ? [el("span", { class: "bar-count", id: "bar-count" }, `All ${places}: `)] : [];
  $("#bar-change").replaceChildren(...count, el("del", {}, s.original), " → ", el("ins", {}, s.final));
  for (const id of ["#bar-accept", "#bar-edit", "#bar-reject"]) $(id).disabled = !open;
  $("#bar-reject").textContent = s.status === STATUS.AUTO_APPLIED ? "Revert" : "Reject";
}

// Nothing above the fold is left, but the fold was neither opened nor rejected: not done yet, and how to finish.
export function foldBanner(folded) {
  return el("p", { class: "done fold-left", id: "detail-done", role: "status" },
    `Nothing above the fold left; ${folded} less sure ${folded === 1 ? "suggestion is" : "suggestions are"} folded. `,
    el("kbd", {}, "z"), " shows them, ", el("kbd", {}, "R"), " rejects them: the transcript is done once they are seen.");
}

// What the reviewer sees once nothing is left to decide here: where to go next.
export function doneBanner(left) {
  return el("p", { class: "done", id: "detail-done", role: "status" }, "Transcript done. ",
    left > 0 ? `n opens the next (${left} left in the queue).` : "Nothing left in the queue.");
}

