// One transcript: its segments with the suggestions marked in place, the one selected, and how to move.

import { FOLD_BELOW, STATUS } from "/review/assets/names.js";
import { $, api, cps, el, enc, isOpen, memoryKey, pairKey, say, state } from "/review/assets/core.js";
import {
  doneBanner, drawReach, foldBanner, fromMemory, loadDefaultScope, loadReach, redrawScope, renderDetail,
} from "/review/assets/detail.js";
import { loadHistory } from "/review/assets/history.js";
import { renderQueue } from "/review/assets/queue.js";
import { showMode, writeUrl } from "/review/assets/review.js";

export async function openTranscript(id, { keepPosition = false, suggestionId = null, push = true } = {}) {
  state.reach.clear(); // opened again after an undo or a re-analysis: counted again
  let view;
  try {
    view = (await api("GET", `/v1/transcripts/${enc(id)}`)).data;
  } catch (err) {
    say(err.message, true);
    return false;
  }
  const wanted = suggestionId ?? (keepPosition ? state.order[state.current]?.id : null);
  if (view.transcript_id !== state.view?.transcript_id) state.single = null;
  state.view = view;
  const segIndex = new Map(view.segments.map((s, i) => [s.id, i]));
  state.order = [...view.suggestions].sort((a, b) =>
    (segIndex.get(a.segment_id) ?? 1e9) - (segIndex.get(b.segment_id) ?? 1e9) || a.start_char - b.start_char);
  await Promise.all([loadTaught(view.user_id), loadHistory(view.transcript_id)]);
  const back = state.order.findIndex((s) => s.id === wanted);
  state.current = back >= 0 ? back : nextToDecide(-1) ?? (state.order.length ? 0 : -1);
  showMode("transcript", false);
  writeUrl(push); // before the selection below replaces it: a new transcript is a new history entry
  renderTranscript();
  renderQueue();
  $("#segments").focus({ preventScroll: true }); // j / k now move through this transcript's suggestions
  select(state.current); // in view, centred: on open, a link, a reload, n / p
  return true;
}

// What the user taught and refused, for "remembered: taught N×, refused M×" (read when a transcript opens).
async function loadTaught(user) {
  try {
    const [taught, refused] = await Promise.all([
      api("GET", `/v1/users/${enc(user)}/corrections?limit=1000`), api("GET", `/v1/users/${enc(user)}/refusals`)]);
    state.taught = new Map(taught.data.map((c) => [memoryKey(c.original, c.final), c]));
    state.refused = new Map(refused.data.map((r) => [memoryKey(r.original, r.final), r]));
  } catch {
    state.taught = new Map();
    state.refused = new Map();
  }
}

// Folded: pending and under the server's threshold, unless the reviewer asked to see them (z).
export const folded = (s) => s.status === STATUS.PENDING && s.confidence < FOLD_BELOW && !state.showFolded;
const needsDecision = (s) => s.status === STATUS.PENDING && !folded(s);

// Every open occurrence of the suggestion's pair with its status: what one key decides unless opened (g).
export function groupOf(i) {
  const s = state.order[i];
  if (!s || !isOpen(s)) return [];
  if (state.single === pairKey(s)) return [i];
  const key = pairKey(s);
  const out = [];
  state.order.forEach((o, j) => { if (o.status === s.status && pairKey(o) === key) out.push(j); });
  return out;
}

// The other ways the same name was heard: every open, shown suggestion with the same final and type and status, by
// pair (what A accepts at once); one entry when the name was heard one way only.
export function heardOtherwise(i) {
  const s = state.order[i];
  if (!s || !isOpen(s)) return new Map();
  const pairs = new Map();
  state.order.forEach((o, j) => {
    if (o.status !== s.status || o.final !== s.final || o.entity_type !== s.entity_type || folded(o)) return;
    if (!pairs.has(pairKey(o))) pairs.set(pairKey(o), []);
    pairs.get(pairKey(o)).push(j);
  });
  return pairs;
}

// The pending suggestions in the order J walks them: text order, or by need (one stop per group).
function walk() {
  const pending = state.order.map((s, i) => i).filter((i) => needsDecision(state.order[i]));
  if (!state.byNeed) return pending;
  const groups = new Map();
  for (const i of pending) {
    const key = pairKey(state.order[i]);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(i);
  }
  const minConf = (g) => Math.min(...g.map((i) => state.order[i].confidence));
  return [...groups.values()].sort((a, b) => b.length - a.length || minConf(a) - minConf(b)).map((g) => g[0]);
}

// The next suggestion to decide after position `from` in the walk (or its first), or null when none is left.
export function nextToDecide(from) {
  const order = walk();
  if (!order.length) return null;
  const at = order.indexOf(from);
  if (at >= 0) return order[at + 1] ?? order[0];
  return order.find((i) => i > from) ?? order[0];
}

export function stepPending(step) {
  const order = walk();
  const at = order.indexOf(state.current);
  let next;
  if (at >= 0) next = order[at + step];
  else next = step > 0 ? order.find((i) => i > state.current) : [...order].reverse().find((i) => i < state.current);
  if (next === undefined) {
    say(step > 0 ? "No pending suggestion after this one" : "No pending suggestion before this one");
    return;
  }
  select(next);
}

export function renderTranscript() {
  const v = state.view;
  const pending = state.order.filter(needsDecision).length;
  const hidden = state.order.filter(folded).length;
  const decided = state.order.filter((s) => s.status === STATUS.VALIDATED || s.status === STATUS.REJECTED).length;
  $("#transcript-title").textContent = v.transcript_id;
  const parts = [`${v.user_id}`, `${v.segments.length} segments`, `${decided} of ${decided + pending} decided`,
    `${state.order.length} suggestions`];
  if (hidden) parts.push(`${hidden} less than ${Math.round(FOLD_BELOW * 100)}% sure, folded (z shows them, R rejects them)`);
  else if (state.showFolded) parts.push(`low-confidence shown (z folds them)`);
  if (state.byNeed) parts.push("biggest groups first (o)");
  $("#transcript-meta").textContent = parts.join(" · ");
  $("#download-bar").hidden = false;
  const low = state.order.filter((s) => s.status === STATUS.PENDING && s.confidence < FOLD_BELOW).length;
  $("#bar-fold").textContent = state.showFolded ? "Hide folded" : `Show folded (${low})`;
  $("#bar-fold").disabled = !low && !state.showFolded;
  $("#bar-reject-fold").disabled = !hidden;
  offerFormats(v.segments.some((seg) => seg.start != null && seg.end != null));
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

// How sure the pipeline was of an auto-applied edit, as the page shades it.
const band = (c) => (c >= 0.85 ? "sure" : c >= 0.7 ? "likely" : "unsure");

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
    const classes = [`s`, s.status];
    if (s.status === STATUS.AUTO_APPLIED) classes.push(fromMemory(s) ? "taught" : band(s.confidence));
    if (folded(s)) classes.push("folded");
    const mark = el("mark", { class: classes.join(" "), "data-i": String(i), id: `s-${i}`,
      title: `${s.original} → ${s.final}` }, shown);
    mark.addEventListener("click", () => select(i));
    body.append(mark);
    if (s.status === STATUS.PENDING && !folded(s)) body.append(el("span", { class: "proposal" }, `→ ${s.final}`));
    at = s.end_char;
  }
  plain(at, chars.length);
  return el("div", { class: "segment" }, el("span", { class: "sid" }, seg.id), body);
}

export function select(i, scroll = true) {
  document.querySelectorAll("mark.current, mark.grouped").forEach((m) => m.classList.remove("current", "grouped"));
  state.current = i;
  const s = state.order[i];
  const group = groupOf(i);
  for (const j of group) if (j !== i) $(`#s-${j}`)?.classList.add("grouped"); // what one key decides too
  const left = walk().length;
  const unseen = state.order.filter(folded).length; // the fold, neither opened nor rejected
  const others = state.queue.filter((t) => t.transcript_id !== state.view?.transcript_id && t.counts.to_decide > 0);
  const done = !state.view || !state.order.length || left ? null : unseen ? foldBanner(unseen) : doneBanner(others.length);
  if (!s) {
    $("#detail").replaceChildren(...(done ? [done] : []), el("p", { class: "hint" },
      state.view ? "No suggestion in this transcript. Select words and press f to fix them by hand." : ""));
    return;
  }
  const mark = $(`#s-${i}`);
  mark?.classList.add("current");
  if (scroll && mark) inView(mark);
  const toDecide = state.order.map((o, j) => j).filter((j) => needsDecision(state.order[j]));
  const position = { at: toDecide.indexOf(i) + 1, total: toDecide.length };
  const view = { group, position, folded: folded(s), single: state.single === pairKey(s), done,
    otherwise: heardOtherwise(i) };
  renderDetail(s, view);
  if (isOpen(s) && !state.defaults.has(pairKey(s))) {
    // the default scope comes from the server: its choice is drawn again once known, the rest left as it is
    loadDefaultScope(s.original, s.final).then(() => { if (state.order[state.current] === s) redrawScope(s); });
  }
  if (isOpen(s)) loadReach(s).then((r) => { if (r && state.order[state.current] === s) drawReach(s, r); });
  writeUrl(false);
}

// After a view change (the fold, a filter, the phone's sheet): the selected suggestion back in view where it moved
// out of it (above the sheet or the bar on a phone).
export function keepInView() {
  const mark = document.querySelector("mark.s.current");
  if (!mark) return;
  const r = mark.getBoundingClientRect();
  if (r.top < 0 || r.bottom > visibleBottom()) inView(mark);
}

// Centre a mark in the viewport; segments far away are laid out only when near (content-visibility), so the first
// scroll can land short: measure again until it is in view.
function inView(mark, tries = 3) {
  mark.scrollIntoView({ block: "center" });
  requestAnimationFrame(() => {
    const r = mark.getBoundingClientRect();
    const bottom = visibleBottom();
    if (r.bottom > bottom && r.top >= 0) window.scrollBy(0, r.top - (bottom - r.height) / 2); // above a phone's sheet
    const now = mark.getBoundingClientRect();
    if ((now.top < 0 || now.bottom > bottom) && tries > 1) inView(mark, tries - 1);
  });
}

// Where the transcript stops being visible: the phone's sheet or action bar, else the window's bottom.
function visibleBottom() {
  for (const el of [$("#detail.sheet"), $("#action-bar")]) {
    if (el && getComputedStyle(el).display !== "none" && getComputedStyle(el).position === "fixed") {
      return el.getBoundingClientRect().top;
    }
  }
  return innerHeight;
}

// Subtitles need times: a call without them is offered only the formats it can give.
function offerFormats(timed) {
  const select = $("#download-format");
  for (const option of select.options) {
    const subtitles = option.value === "vtt" || option.value === "srt";
    option.disabled = subtitles && !timed;
    option.title = option.disabled ? "this call's segments carry no times" : "";
  }
  if (select.selectedOptions[0]?.disabled) select.value = "txt";
}
