"""Learning loop: does what a reviewer teaches stick? Repeated mistakes in the second half of a meeting.

Per transcript, a simulated reviewer works through the first half of the segments over the HTTP API:
it rejects every suggestion that breaks an entity or adds word errors (the yardstick's harm_auto rule),
accepts the ones that fix an entity or bring the words nearer the reference (form fixes included),
edits a suggestion on an annotated error to the reference, and fixes by hand every missed error that is
not made of function words. Then the second half is analysed for the same user (with that memory) and
for a fresh user (without); both are scored with the yardstick on the second half only.
"Repeated mistakes" are the second-half errors whose (heard → meant) pair the reviewer fixed in the
first half, on spans that are not function words: the table says how many come back fixed
automatically, and how many are at least suggested.
The reviewer reads the gold annotations — it plays the human; namesake never sees them.

Usage: python -m bench.measure.learning_loop [--file earnings21.jsonl.gz] [--limit 147]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from bench.common import bench_file, judge, score, yardstick
from namesake.api.app import create_app
from namesake.core.settings import Settings
from namesake.core.text import compact
from namesake.reliability.windows import function_words

KEY = "bench-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
TYPES = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION",
         "ABBREVIATION": "ACRONYM"}  # fmt: skip


def pair_key(heard: str, meant: str) -> tuple[str, str]:
    """A (heard → meant) pair as the reviewer would recognise it again."""
    return (compact(heard), compact(meant))


def function_span(text: str, language: str) -> bool:
    """A span made of function words only: the aligner's noise, not a name to fix."""
    stop = function_words(language)
    return all(compact(w) in stop for w in text.split())


def review_first_half(
    client: TestClient,
    t: dict[str, Any],
    segs: list[dict[str, Any]],
    user: str,
    taught: set[tuple[str, str]],
    *,
    leave_auto: bool = False,
) -> dict[str, int]:
    """The simulated reviewer's pass; returns what it did and adds the pairs it fixed to `taught`."""
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
        fixes, breaks, closer = judge(seg, sug)
        target = next((g for g in seg["errors"] if g.get("kind") != "deletion"
                       and g["start"] == sug["start_char"] and g["end"] == sug["end_char"]), None)  # fmt: skip
        path = f"/v1/suggestions/{sug['id']}"
        if not breaks and closer <= 0 and (fixes or closer < 0):
            if leave_auto and sug["status"] == "auto_applied":
                # a right auto-applied fix left untouched: it teaches the memory nothing
                fixed_spans.add((sug["segment_id"], sug["start_char"], sug["end_char"]))
                continue
            client.post(f"{path}/accept", json={"transcript_id": tid}, headers=AUTH)
            done["accept"] += 1
            if target is not None:
                taught.add(pair_key(target["hyp_span"], target["ref_span"]))
        elif target is not None and not breaks:
            client.post(f"{path}/edit", json={"transcript_id": tid, "final": target["ref_span"]}, headers=AUTH)
            done["edit"] += 1
            taught.add(pair_key(target["hyp_span"], target["ref_span"]))
        else:
            client.post(f"{path}/reject", json={"transcript_id": tid}, headers=AUTH)
            done["reject"] += 1
            continue
        fixed_spans.add((sug["segment_id"], sug["start_char"], sug["end_char"]))
    language = t.get("language", "en")
    for seg in segs:
        for g in seg["errors"]:
            span = (seg["id"], g["start"], g["end"])
            if g.get("kind") == "deletion" or span in fixed_spans or function_span(g["hyp_span"], language):
                continue  # a reviewer fixes names, not the aligner's noise on "of" or "the"
            fix = {"user_id": user, "transcript_id": tid, "segment_id": seg["id"], "start_char": g["start"],
                   "end_char": g["end"], "original": g["hyp_span"], "final": g["ref_span"],
                   "entity_type": TYPES.get(g.get("entity_type") or "", "KEYWORD"),
                   "segment_text": seg["text"]}  # fmt: skip
            if client.post("/v1/corrections", json=fix, headers=AUTH).status_code == 201:
                done["manual"] += 1
                taught.add(pair_key(g["hyp_span"], g["ref_span"]))
    return done


def repeated(
    t: dict[str, Any], segs: list[dict[str, Any]], taught: set[tuple[str, str]], pred: dict, missed: list | None = None
) -> dict[str, int]:
    """Second-half errors the reviewer already fixed in the first half: how many come back fixed, or suggested."""
    language = t.get("language", "en")
    by_seg: dict[str, list[dict[str, Any]]] = {}
    for s in pred["suggestions"]:
        by_seg.setdefault(s["segment_id"], []).append(s)
    out = {"repeated": 0, "fixed_auto": 0, "suggested": 0}
    for seg in segs:
        for g in seg["errors"]:
            if g.get("kind") == "deletion" or function_span(g["hyp_span"], language):
                continue
            if pair_key(g["hyp_span"], g["ref_span"]) not in taught:
                continue
            out["repeated"] += 1
            fixing = []
            for s in by_seg.get(seg["id"], []):
                new, edits = yardstick().apply(seg["text"], [s])
                if yardstick().entity_ok(g, new, edits):
                    fixing.append(s)
            out["suggested"] += bool(fixing)
            auto = any(s["status"] == "auto_applied" for s in fixing)
            out["fixed_auto"] += auto
            if missed is not None and not auto:
                near = [
                    s for s in by_seg.get(seg["id"], []) if s["start_char"] < g["end"] and s["end_char"] > g["start"]
                ]
                missed.append({"transcript_id": t["transcript_id"], "heard": g["hyp_span"], "meant": g["ref_span"],
                               "text": seg["text"], "suggested": bool(fixing), "overlapping": near})  # fmt: skip
    return out


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
    ap.add_argument(
        "--fold-models",
        type=Path,
        help="per-fold scorers (calibrate_reading.py --fold-models): each "
        "call analysed by trees fitted without it; without this, the shipped trees (in-sample on the dev file)",
    )
    ap.add_argument(
        "--leave-auto",
        action="store_true",
        help="the reviewer leaves right auto-applied fixes untouched (they teach nothing) instead of accepting",
    )
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    split = bench_file(a.file)
    # each fold's own embedded database, whatever DATABASE_URL says: a shared one (the test suite's) would be
    # emptied under the loop by anything else using it, and the loop's rows left in it
    base = {"namesake_api_keys": [KEY], "max_request_bytes": 10**9, "database_url": None}
    second_split = a.out / "learning_second_half.jsonl"
    with_mem, without = a.out / "learning_with_memory.jsonl", a.out / "learning_without_memory.jsonl"
    totals = {"accept": 0, "edit": 0, "reject": 0, "manual": 0}
    rep = {label: {"repeated": 0, "fixed_auto": 0, "suggested": 0} for label in ("with memory", "fresh user")}
    missed: list[dict[str, Any]] = []  # repeated mistakes the memory did not fix automatically, for reading
    with gzip.open(split, "rt") as src:
        calls = [json.loads(line) for n, line in enumerate(src) if n < a.limit]
    with second_split.open("w") as s2, with_mem.open("w") as pm, without.open("w") as pw:
        done = 0
        for fold, model_settings in scorers(a.fold_models, calls):
            mine_calls = [t for t in calls if fold is None or fold_of(a.fold_models, t) == fold]
            data_dir = Path(tempfile.mkdtemp(prefix="namesake-loop-"))
            app_settings = Settings.model_validate({**base, **model_settings, "namesake_data_dir": data_dir})
            with TestClient(create_app(app_settings)) as client:
                for t in mine_calls:
                    half = len(t["segments"]) // 2
                    first, second = t["segments"][:half], t["segments"][half:]
                    user = "reviewer-" + t["transcript_id"]
                    taught: set[tuple[str, str]] = set()
                    for k, v in review_first_half(client, t, first, user, taught, leave_auto=a.leave_auto).items():
                        totals[k] += v
                    mine = analyze_second_half(client, t, second, user, "second")
                    fresh = analyze_second_half(client, t, second, "fresh-" + t["transcript_id"], "fresh")
                    for label, pred in (("with memory", mine), ("fresh user", fresh)):
                        for k, v in repeated(
                            t, second, taught, pred, missed if label == "with memory" else None
                        ).items():
                            rep[label][k] += v
                    pm.write(json.dumps({**mine, "taught": sorted(taught)}) + "\n")
                    pw.write(json.dumps(fresh) + "\n")
                    s2.write(json.dumps({**t, "segments": second}) + "\n")
                    done += 1
                    print(f"\r{done} transcripts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    with (a.out / "learning_missed.jsonl").open("w") as fh:
        fh.writelines(json.dumps(m) + "\n" for m in missed)
    rows = {}
    for label, path in (("with memory", with_mem), ("without memory (fresh user)", without)):
        table, data = score(second_split, path)
        rows[label] = data["TOTAL"]
        print(f"\n### second half — {label}\n{table}")
    print(f"\nreviewer actions on first halves: {totals}")
    print(guards(with_mem))
    print("\n| second half | repeated mistakes | fixed automatically | suggested at all | EER_auto | EER_oracle "
          "| harm_auto | precision_auto_ref |\n|---|---|---|---|---|---|---|---|")  # fmt: skip
    for label, key in (("with the reviewer's memory", "with memory"), ("fresh user", "without memory (fresh user)")):
        r, c = rows[key], rep["with memory" if key == "with memory" else "fresh user"]
        n = max(1, c["repeated"])
        print(
            f"| {label} | {c['repeated']} | {c['fixed_auto'] / n:.1%} | {c['suggested'] / n:.1%} | "
            f"{r['EER_auto']:.4f} | {r['EER_oracle']:.4f} | {fmt(r['harm_auto'])} | {fmt(r['precision_auto_ref'])} |"
        )


def guards(predictions: Path) -> str:
    """The memory's guards as a reviewer would check them on the second halves: what must never happen."""
    stop = function_words("en")
    one_off = function = 0
    for line in predictions.open():
        for s in json.loads(line)["suggestions"]:
            sig = s.get("signals") or {}
            if sig.get("remembered_one_off") and s["status"] == "auto_applied":
                one_off += 1  # a paste or a sentence applied where it was not taught
            if s["source"] == "memory" and compact(s["original"]) in stop and compact(s["final"]) != compact(
                    s["original"]):  # fmt: skip
                function += 1  # a function word turned into a name by a normalised match
    return (
        f"guards: one-off finals applied elsewhere {one_off}; function words rewritten by the memory {function} "
        "(only where that very word was taught)"
    )


@functools.cache
def _folds(folder: Path) -> dict[str, int]:
    return dict(json.loads((folder / "folds.json").read_text())["fold_of_group"])


def fold_of(folder: Path, t: dict[str, Any], stem: str = "earnings21") -> int:
    """The fold that held this call out (folds.json, read once, by the call group as calibrate.py names it)."""
    return int(_folds(folder)[f"{stem}:{t.get('group', t['transcript_id'])}"])


def scorers(folder: Path | None, calls: list[dict[str, Any]]) -> list[tuple[int | None, dict[str, Any]]]:
    """(fold, settings update) per scorer to run: one per fold that holds some of these calls, or the shipped one."""
    if folder is None:
        return [(None, {})]
    if not (folder / "folds.json").exists():
        raise SystemExit(f"no folds.json in {folder}: run calibrate_reading.py --fold-models {folder}")
    wanted = sorted({fold_of(folder, t) for t in calls})
    return [(k, {"reliability_scorer_model": folder / f"fold-{k}.scorer.json",
                 "reliability_reading_model": folder / f"fold-{k}.reading.json"}) for k in wanted]  # fmt: skip


def fmt(v: float | None) -> str:
    """A share, or - when there was nothing to count."""
    return "-" if v is None else f"{v:.4f}"


if __name__ == "__main__":
    main()
