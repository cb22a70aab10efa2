"""Learning loop: does the corrections memory make the second half of a meeting better?

Per transcript, a simulated reviewer works through the first half of the segments over the HTTP API
(accepts right suggestions, edits wrong ones, rejects harmful ones, adds manual fixes for missed
errors). Then the second half is analysed for the same user (with that memory) and for a fresh user
(without); both are scored with the yardstick on the second half only.
The reviewer reads the gold annotations — it plays the human; namesake never sees them.

Usage: python bench/learning_loop.py [--file earnings21.jsonl.gz] [--limit 147]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from _common import BENCH_DATA, bench_file, right_entity_changes, score
from namesake.api.app import create_app
from namesake.reliability.candidates import function_words
from namesake.settings import Settings

sys.path.insert(0, str(BENCH_DATA))
import score as yardstick

KEY = "bench-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
TYPES = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION",
         "ABBREVIATION": "ACRONYM"}  # fmt: skip


def judge(seg: dict[str, Any], s: dict[str, Any]) -> tuple[int, int]:
    """(entities fixed, right entities broken) if this suggestion alone were applied."""
    new, edits = yardstick.apply(seg["text"], [s])
    subs = [g for g in seg["errors"] if g.get("kind") != "deletion"]
    repaired, broken = right_entity_changes(seg, new, edits)
    return sum(yardstick.entity_ok(g, new, edits) for g in subs) + repaired, broken


def review_first_half(client: TestClient, t: dict[str, Any], segs: list[dict[str, Any]], user: str) -> dict[str, int]:
    """The simulated reviewer's pass; returns what it did."""
    tid = t["transcript_id"] + "--first"
    body = {"transcript_id": tid, "user_id": user, "language": t.get("language", "en"),
            "segments": [{"id": s["id"], "text": s["text"]} for s in segs],
            "canonical_entities": t["canonical_entities"]}  # fmt: skip
    result = client.post("/v1/reliability/analyze", json=body, headers=AUTH).json()
    by_id = {s["id"]: s for s in segs}
    done = {"accept": 0, "edit": 0, "reject": 0, "manual": 0}
    fixed_spans: set[tuple[str, int, int]] = set()
    for sug in result["suggestions"]:
        seg = by_id[sug["segment_id"]]
        fixes, breaks = judge(seg, sug)
        target = next((g for g in seg["errors"] if g.get("kind") != "deletion"
                       and g["start"] == sug["start_char"] and g["end"] == sug["end_char"]), None)  # fmt: skip
        path = f"/v1/suggestions/{sug['id']}"
        if fixes and not breaks:
            client.post(f"{path}/accept", json={"transcript_id": tid}, headers=AUTH)
            done["accept"] += 1
        elif target is not None and not breaks:
            client.post(f"{path}/edit", json={"transcript_id": tid, "final": target["ref_span"]}, headers=AUTH)
            done["edit"] += 1
        else:
            client.post(f"{path}/reject", json={"transcript_id": tid}, headers=AUTH)
            done["reject"] += 1
            continue
        fixed_spans.add((sug["segment_id"], sug["start_char"], sug["end_char"]))
    stop = function_words(t.get("language", "en"))
    for seg in segs:
        for g in seg["errors"]:
            span = (seg["id"], g["start"], g["end"])
            words = [w.casefold().strip(".,?!") for w in g["hyp_span"].split()]
            if g.get("kind") == "deletion" or span in fixed_spans or all(w in stop for w in words):
                continue  # a reviewer fixes names, not the aligner's noise on "of" or "the"
            fix = {"user_id": user, "transcript_id": tid, "segment_id": seg["id"], "start_char": g["start"],
                   "end_char": g["end"], "original": g["hyp_span"], "final": g["ref_span"],
                   "entity_type": TYPES.get(g.get("entity_type") or "", "KEYWORD"),
                   "segment_text": seg["text"]}  # fmt: skip
            if client.post("/v1/corrections", json=fix, headers=AUTH).status_code == 201:
                done["manual"] += 1
    return done


def analyze_second_half(client: TestClient, t: dict[str, Any], segs: list[dict[str, Any]], user: str, tag: str) -> dict:
    """Predictions for the second half, keyed by the original transcript id (for the yardstick)."""
    body = {"transcript_id": f"{t['transcript_id']}--{tag}", "user_id": user, "language": t.get("language", "en"),
            "segments": [{"id": s["id"], "text": s["text"]} for s in segs],
            "canonical_entities": t["canonical_entities"]}  # fmt: skip
    result = client.post("/v1/reliability/analyze", json=body, headers=AUTH).json()
    return {"transcript_id": t["transcript_id"], "seconds": result["seconds"], "suggestions": result["suggestions"]}


def main() -> None:
    """Run the loop over the file, then score both second-half prediction sets."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    ap.add_argument("--limit", type=int, default=10**9)
    ap.add_argument("--out", type=Path, default=Path("bench/out"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    split = bench_file(a.file)
    settings = Settings(namesake_data_dir=Path(tempfile.mkdtemp(prefix="namesake-loop-")), namesake_api_keys=[KEY],
                        max_request_bytes=10**9)  # fmt: skip
    second_split = a.out / "learning_second_half.jsonl"
    with_mem, without = a.out / "learning_with_memory.jsonl", a.out / "learning_without_memory.jsonl"
    totals = {"accept": 0, "edit": 0, "reject": 0, "manual": 0}
    with TestClient(create_app(settings)) as client, gzip.open(split, "rt") as src, second_split.open("w") as s2, \
            with_mem.open("w") as pm, without.open("w") as pw:  # fmt: skip
        for n, line in enumerate(src):
            if n >= a.limit:
                break
            t = json.loads(line)
            half = len(t["segments"]) // 2
            first, second = t["segments"][:half], t["segments"][half:]
            user = "reviewer-" + t["transcript_id"]
            for k, v in review_first_half(client, t, first, user).items():
                totals[k] += v
            pm.write(json.dumps(analyze_second_half(client, t, second, user, "second")) + "\n")
            pw.write(json.dumps(analyze_second_half(client, t, second, "fresh-" + t["transcript_id"], "fresh")) + "\n")
            s2.write(json.dumps({**t, "segments": second}) + "\n")
            print(f"\r{n + 1} transcripts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows = {}
    for label, path in (("with memory", with_mem), ("without memory (fresh user)", without)):
        table, data = score(second_split, path)
        rows[label] = data["TOTAL"]
        print(f"\n### second half — {label}\n{table}")
    w, f = rows["with memory"], rows["without memory (fresh user)"]
    rel = 1 - w["EER_oracle"] / f["EER_oracle"] if f["EER_oracle"] else 0.0
    print(f"\nreviewer actions on first halves: {totals}")
    print("\n| second half | EER_auto | EER_oracle | broken_auto | precision_auto |\n|---|---|---|---|---|")
    for label, r in rows.items():
        print(f"| {label} | {r['EER_auto']:.4f} | {r['EER_oracle']:.4f} | {r['broken_auto']} | {r['precision_auto']} |")
    print(f"\nmemory lowers EER_oracle by {rel:.1%} relative (target ≥ 20%); "
          f"broken_auto {w['broken_auto']} vs {f['broken_auto']} (must not rise)")  # fmt: skip


if __name__ == "__main__":
    main()
