// The transcript as reviewed, downloaded: what the pipeline applied and the reviewer decided, written in.

import { $, ApiError, enc, say, state } from "/review/assets/core.js";

export async function downloadReviewed() {
  const v = state.view;
  if (!v) return;
  const format = $("#download-format").value;
  const r = await fetch(`/v1/transcripts/${enc(v.transcript_id)}/text?format=${format}`,
    { headers: { Authorization: `Bearer ${state.key}` } });
  if (!r.ok) {
    const data = await r.json().catch(() => null);
    const err = new ApiError(r.status, data?.error?.message || `${r.status} ${r.statusText}`);
    say(`Cannot download: ${err.message}`, true);
    return;
  }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await r.blob());
  link.download = `${v.transcript_id}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  say(`Downloaded ${link.download}`);
}
