// What every part of the review page shares: its state, the API call, the status line, DOM helpers.

import { STATUS } from "/review/assets/names.js";

export const $ = (sel) => document.querySelector(sel);
export const KEY_STORE = "namesake.key"; // sessionStorage: the key lives as long as the tab

export const state = {
  key: sessionStorage.getItem(KEY_STORE) || "",
  queue: [], queueIndex: 0,
  view: null, order: [], current: -1,
  memory: [], memoryUser: null, memoryNext: null, memoryIndex: 0,
  taught: new Map(), // "original|final" (lowercased) → correction, for "remembered: you taught it N×"
  refused: new Map(), // the same key → the user's standing refusal of the pair
  refusals: [], // the memory view's list of refusals
  mode: "transcript",
  chain: Promise.resolve(),
  undo: [], // the last decisions, newest last: { transcriptId, ids, label }
  // J / K in the order that most needs a human (biggest groups, then lowest confidence); kept for the tab like the key
  byNeed: sessionStorage.getItem("namesake.byNeed") === "true",
  // pending suggestions under the server's fold threshold are drawn and visited too (z); kept for the tab
  showFolded: sessionStorage.getItem("namesake.showFolded") === "true",
  single: null, // the pair key being decided one occurrence at a time (g), else null: a key decides the group
  history: [], // the open transcript's decisions as the server keeps them, newest first
  scopes: new Map(), // pair key → where the reviewer chose its lesson applies next (s), else the server's default
  defaults: new Map(), // pair key → the server's default scope for it: { scope, everyday }
  reach: new Map(), // transcript and pair key → where the change stands open (server's count), until a decision
};

// Where a lesson applies next, in a reviewer's words (the server's MemoryScope values).
export const SCOPE_ORDER = ["transcript", "list", "user"];
export function scopeWords(scope, final, user) {
  return { transcript: "this transcript only", list: `calls whose name list has ${final}`,
    user: `all of ${user}'s calls` }[scope] || scope;
}

export class ApiError extends Error {
  constructor(status, message, field) { super(message); this.status = status; this.field = field; }
}

export async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.key}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => null);
  if (!r.ok) throw new ApiError(r.status, data?.error?.message || `${r.status} ${r.statusText}`, data?.error?.field);
  return { data, headers: r.headers };
}

export function say(text, bad = false) {
  const node = $("#status");
  node.textContent = text;
  node.className = `status shown${bad ? " bad" : ""}`;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { node.className = "status"; }, bad ? 5000 : 2200);
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-") || k.startsWith("aria-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

export const cps = (text) => Array.from(text); // offsets are code points, as the API counts them

// A span in its sentence: the words before, the span marked, the words after ("…" only where the text goes on).
export function inSentence(text, start, end, around) {
  const chars = cps(text);
  const from = Math.max(0, start - around);
  const to = Math.min(chars.length, end + around);
  return [(from > 0 ? "…" : "") + chars.slice(from, start).join(""), el("mark", {}, chars.slice(start, end).join("")),
    chars.slice(end, to).join("") + (to < chars.length ? "…" : "")];
}
export const enc = encodeURIComponent;

// What makes occurrences one group, as the server's reopen.pair_of: the words heard (any case), the final.
export const pairKey = (s) => `${s.original.split(/\s+/).join(" ").toLowerCase()}\u0001${s.final}`;
// The memory's key for a taught or refused pair.
export const memoryKey = (original, final) => `${original.toLowerCase()}|${final.toLowerCase()}`;
export const isOpen = (s) => s.status === STATUS.PENDING || s.status === STATUS.AUTO_APPLIED;

// A question that must be answered before a wide action: true when the reviewer chose `ok` (Enter).
export async function confirmed(text, ok = "Forget") {
  $("#confirm-text").textContent = text;
  $("#confirm-ok").firstChild.textContent = `${ok} `;
  const dialog = $("#confirm");
  dialog.returnValue = "";
  dialog.showModal();
  $("#confirm-ok").focus();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
  return dialog.returnValue === "ok";
}
