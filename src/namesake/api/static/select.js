// Words chosen for a fix by hand: the selection as a span of the segment as analysed (suggestions in it
// taken whole), made with the mouse or with Shift+arrows from the current suggestion.

import { cps, state } from "/review/assets/core.js";

const suggestionOf = (mark) => state.order[Number(mark.dataset.i)];
const indexIn = (node) => Array.prototype.indexOf.call(node.parentNode.childNodes, node);

// Where a piece of the segment starts and ends in the text as analysed (a proposal sits at its mark's end).
function startOf(child) {
  if (child.matches?.("span.t")) return Number(child.dataset.o);
  if (child.matches?.("mark.s")) return suggestionOf(child).start_char;
  return endOf(child.previousElementSibling);
}

function endOf(child) {
  if (!child) return 0;
  if (child.matches("span.t")) return Number(child.dataset.o) + cps(child.textContent).length;
  if (child.matches("mark.s")) return suggestionOf(child).end_char;
  return endOf(child.previousElementSibling);
}

// The analysed offset of a DOM point; inside a suggestion it takes the suggestion's start or end (edge).
function offsetOf(node, offset, edge) {
  const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
  const textDiv = element?.closest(".text");
  if (!textDiv) return null;
  if (node === textDiv) {
    const after = textDiv.childNodes[offset];
    return { textDiv, at: after ? startOf(after) : endOf(textDiv.lastElementChild) };
  }
  const child = element.closest(".text > *");
  if (child.matches("span.t")) {
    const text = child.textContent;
    const utf16 = node.nodeType === Node.TEXT_NODE ? offset : (offset ? text.length : 0);
    return { textDiv, at: Number(child.dataset.o) + cps(text.slice(0, utf16)).length };
  }
  return { textDiv, at: edge === "start" ? startOf(child) : endOf(child) };
}

// What the reader sees over [start, end): auto-applied and accepted finals written in.
function shownText(textDiv, start, end, chars) {
  let out = "";
  let at = start;
  for (const mark of textDiv.querySelectorAll("mark.s")) {
    const s = suggestionOf(mark);
    if (s.start_char < start || s.end_char > end) continue;
    out += chars.slice(at, s.start_char).join("") + mark.textContent;
    at = s.end_char;
  }
  return out + chars.slice(at, end).join("");
}

export function selectedSpan() {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
  const range = sel.getRangeAt(0);
  const a = offsetOf(range.startContainer, range.startOffset, "start");
  const b = offsetOf(range.endContainer, range.endOffset, "end");
  if (!a || !b) return null;
  if (a.textDiv !== b.textDiv) return { error: "Select words within one segment." };
  const segmentId = a.textDiv.dataset.segment;
  const chars = cps(state.view.segments.find((s) => s.id === segmentId).text);
  let start = a.at;
  let end = b.at;
  while (start < end && /\s/.test(chars[start])) start += 1;
  while (end > start && /\s/.test(chars[end - 1])) end -= 1;
  if (start >= end) return null;
  return { segmentId, start, end, original: chars.slice(start, end).join(""),
    shown: shownText(a.textDiv, start, end, chars) };
}

// The DOM point of an analysed offset: in plain text exactly, at a suggestion before or after it whole.
function domPoint(textDiv, at, edge) {
  for (const child of textDiv.children) {
    if (child.matches("span.t")) {
      const from = Number(child.dataset.o);
      const chars = cps(child.textContent);
      if (at >= from && at <= from + chars.length) return [child.firstChild, chars.slice(0, at - from).join("").length];
    } else if (child.matches("mark.s")) {
      const s = suggestionOf(child);
      if (at >= s.start_char && at <= s.end_char) {
        const before = edge === "start" ? at < s.end_char : at <= s.start_char;
        return [textDiv, indexIn(child) + (before ? 0 : 1)];
      }
    }
  }
  return [textDiv, textDiv.childNodes.length];
}

// Shift+→ takes in the next word, Shift+← the previous one; the first press starts from the current suggestion.
export function extendSelection(step) {
  let span = selectedSpan();
  if (!span || span.error) {
    const s = state.order[state.current];
    if (!s || !document.getElementById(`s-${state.current}`)) return false;
    span = { segmentId: s.segment_id, start: s.start_char, end: s.end_char };
  }
  const textDiv = document.querySelector(`.text[data-segment="${CSS.escape(span.segmentId)}"]`);
  const chars = cps(state.view.segments.find((s) => s.id === span.segmentId).text);
  let { start, end } = span;
  if (step > 0) {
    while (end < chars.length && /\s/.test(chars[end])) end += 1;
    while (end < chars.length && !/\s/.test(chars[end])) end += 1;
  } else {
    while (start > 0 && /\s/.test(chars[start - 1])) start -= 1;
    while (start > 0 && !/\s/.test(chars[start - 1])) start -= 1;
  }
  const range = document.createRange();
  range.setStart(...domPoint(textDiv, start, "start"));
  range.setEnd(...domPoint(textDiv, end, "end"));
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return true;
}
