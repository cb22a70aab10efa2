// The review workspace: a queue of transcripts, suggestions marked in place, the user's memory.
// Plain modules, no dependencies, no request to another host; every action has a key; the URL says where
// the reviewer is (?t=transcript&s=suggestion, or ?m=user), so reload, Back and a shared link land there.

import { $, KEY_STORE, api, say, state } from "/review/assets/core.js";
import {
  acceptHeardOtherwise, completeWhole, cycleScope, decide, editCurrent, fixSelection, openGroup, rejectFolded,
  undoLast,
} from "/review/assets/decide.js";
import { forgetSelected, openMemory, renderMemory } from "/review/assets/memory.js";
import { loadQueue, moveQueue, stepTranscript } from "/review/assets/queue.js";
import { downloadReviewed } from "/review/assets/download.js";
import { extendSelection } from "/review/assets/select.js";
import { keepInView, openTranscript, renderTranscript, select, stepPending } from "/review/assets/transcript.js";

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
  showMode("transcript", false);
  await loadQueue();
  if (!(await followUrl())) $("#queue").focus();
  return true;
}

function signOut() {
  sessionStorage.removeItem(KEY_STORE);
  location.assign("/review");
}

// ---- where the reviewer is: the URL -------------------------------------------------------

export function writeUrl(push) {
  const params = new URLSearchParams();
  if (state.mode === "memory" && state.memoryUser) params.set("m", state.memoryUser);
  else if (state.view) {
    params.set("t", state.view.transcript_id);
    const s = state.order[state.current];
    if (s) params.set("s", s.id);
  }
  const url = `/review${params.size ? `?${params}` : ""}`;
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

// Open what the URL names; false when it names nothing.
async function followUrl() {
  const params = new URLSearchParams(location.search);
  if (params.get("m")) { await openMemory(false, params.get("m"), false); return true; }
  if (params.get("t")) return openTranscript(params.get("t"), { suggestionId: params.get("s"), push: false });
  showMode("transcript", false);
  return false;
}

export function showMode(mode, push = true) {
  state.mode = mode;
  $("#memory-view").hidden = mode !== "memory";
  $("#transcript-view").hidden = mode !== "transcript";
  $("#detail").hidden = mode !== "transcript";
  $("#app").classList.toggle("memory", mode === "memory");
  $("#tab-transcript").setAttribute("aria-current", mode === "transcript" ? "page" : "false");
  $("#tab-memory").setAttribute("aria-current", mode === "memory" ? "page" : "false");
  if (push) writeUrl(true);
}

// ---- keys ---------------------------------------------------------------------------------

// The keys of the view the reviewer is in: every key listed does something where it is shown.
function showHelp() {
  $("#help-transcript").hidden = state.mode !== "transcript";
  $("#help-memory").hidden = state.mode !== "memory";
  $("#help").showModal();
}

function toggle(name, text) {
  state[name] = !state[name];
  sessionStorage.setItem(`namesake.${name}`, String(state[name])); // a reload keeps how the reviewer reads
  if (!state.view) return;
  renderTranscript();
  keepInView();
  say(text[state[name] ? 0 : 1]);
}

function onKey(ev) {
  if (document.querySelector("dialog[open]") || $("#app").hidden) return;
  const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName);
  if (typing) {
    if (ev.target.id === "user-filter" && (ev.key === "Escape" || ev.key === "Enter")) {
      ev.preventDefault();
      ev.target.blur();
      state.chain = state.chain.then(() => loadQueue()).then(() => $("#queue").focus());
    }
    return;
  }
  const undoKey = (ev.ctrlKey || ev.metaKey) && !ev.altKey && ev.key.toLowerCase() === "z";
  if (!undoKey && (ev.ctrlKey || ev.metaKey || ev.altKey)) return;
  const inQueue = document.activeElement === $("#queue");
  const keys = {
    "?": () => showHelp(),
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
    keys.w = () => completeWhole();
    keys.g = () => openGroup();
    keys.A = () => acceptHeardOtherwise();
    keys.o = () => toggle("byNeed", ["Pending: biggest groups first, then lowest confidence", "Pending: in text order"]);
    keys.z = () => toggle("showFolded", ["Low-confidence suggestions shown", "Low-confidence suggestions folded"]);
    keys.R = () => rejectFolded();
    keys.u = () => undoLast();
    keys.s = () => cycleScope();
    if (ev.shiftKey && (ev.key === "ArrowRight" || ev.key === "ArrowLeft")) {
      keys[ev.key] = () => extendSelection(ev.key === "ArrowRight" ? 1 : -1) || say("Select a suggestion first", true);
    }
  }
  const action = undoKey ? () => undoLast() : keys[ev.key];
  if (action) {
    ev.preventDefault();
    // one after another: a key pressed while a decision is on its way acts on the suggestion that follows
    state.chain = state.chain.then(action).catch((err) => say(String(err), true));
  }
}

// On a phone the suggestion's panel (why, where else, where its lesson applies) opens as a sheet above the bar,
// beside the selection rather than under the whole transcript.
function toggleSheet(open = !$("#detail").classList.contains("sheet")) {
  $("#detail").classList.toggle("sheet", open);
  $("#bar-why").setAttribute("aria-expanded", String(open));
  $("#bar-why").textContent = open ? "Why ▾" : "Why ▴";
  keepInView();
}

function init() {
  $("#signin-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("#key").value.trim()); });
  $("#sign-out").addEventListener("click", signOut);
  $("#download").addEventListener("click", downloadReviewed);
  $("#tab-memory").addEventListener("click", () => openMemory());
  $("#tab-transcript").addEventListener("click", () => showMode("transcript"));
  $("#help-open").addEventListener("click", showHelp);
  $("#bar-next").addEventListener("click", () => document.dispatchEvent(new KeyboardEvent("keydown", { key: "J" })));
  $("#bar-why").addEventListener("click", () => toggleSheet());
  for (const b of document.querySelectorAll("#action-bar button[data-key]")) {
    b.addEventListener("click", () => document.dispatchEvent(new KeyboardEvent("keydown", { key: b.dataset.key })));
  }
  $("#memory-more").addEventListener("click", () => openMemory(true));
  $("#queue-more").addEventListener("click", () => loadQueue(true));
  $("#pending-only").addEventListener("change", () => loadQueue());
  $("#user-filter").addEventListener("change", () => loadQueue());
  $("#segments").tabIndex = -1;
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => { if (state.key && !$("#app").hidden) followUrl(); });
  if (state.key) signIn(state.key);
}

init();
