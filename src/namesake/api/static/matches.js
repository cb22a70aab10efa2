// Replace all: the other places of the transcript where the words fixed by hand were heard, each with its sentence.

import { STATUS } from "/review/assets/names.js";
import { $, cps, el, inSentence, state } from "/review/assets/core.js";

const WORD = /[\p{L}\p{N}]/u;
const AROUND = 40; // characters of the sentence shown on each side of a match

const squash = (text) => text.split(/\s+/).join(" ").toLowerCase();

// Whether [start, end) of a segment holds a decision the reviewer took (the server would refuse to overwrite it).
function decided(segmentId, start, end) {
  return state.order.some((s) => s.segment_id === segmentId && s.status === STATUS.VALIDATED &&
    s.start_char < end && s.end_char > start);
}

// Every other whole-word occurrence of the span's words (any case), as code-point spans of the analysed text.
export function otherMatches(span) {
  const wanted = squash(span.original);
  if (!wanted) return [];
  const out = [];
  for (const seg of state.view.segments) {
    const lower = seg.text.toLowerCase();
    let from = 0;
    for (;;) {
      const at = lower.indexOf(wanted, from);
      if (at < 0) break;
      from = at + 1;
      const end = at + wanted.length;
      if (WORD.test(seg.text[at - 1] || "") || WORD.test(seg.text[end] || "")) continue;
      const start = cps(seg.text.slice(0, at)).length;
      const stop = start + cps(seg.text.slice(at, end)).length;
      if (seg.id === span.segmentId && start === span.start) continue;
      if (decided(seg.id, start, stop)) continue;
      out.push({ segment_id: seg.id, start_char: start, end_char: stop, text: seg.text });
    }
  }
  return out;
}

// The preview: each match in its sentence, the words that change marked, with a tick of its own ("three" in "Phase
// three" but not in "thirteen point three million").
export function preview(matches) {
  return matches.map((m, i) => el("li", {},
    el("label", { class: "check" }, el("input", { type: "checkbox", checked: true, className: "match-tick",
      "data-i": String(i), "aria-label": `apply in segment ${m.segment_id}` }),
    ...inSentence(m.text, m.start_char, m.end_char, AROUND))));
}

// The matches the reviewer left ticked, when replace-all is on.
export function tickedMatches(matches) {
  if (!$("#edit-all").checked) return [];
  return [...document.querySelectorAll("#edit-match-list .match-tick")].filter((b) => b.checked)
    .map((b) => matches[Number(b.dataset.i)]);
}

// Show the replace-all choice in the fix dialog (off by default), or hide it when there is no other match.
export function showMatches(matches) {
  const box = $("#edit-matches");
  box.hidden = !matches.length;
  $("#edit-all").checked = false;
  $("#edit-all-count").textContent = `${matches.length} other match${matches.length === 1 ? "" : "es"}`;
  $("#edit-match-list").replaceChildren(...preview(matches));
}
