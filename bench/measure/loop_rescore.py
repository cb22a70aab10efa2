"""The held-out loop's figures again, from a kept run, with the reviewer's own suggestions held back or let through.

Reads the folder `loop_check_folds --keep DIR` kept (each fold's second halves, both users' predictions, and each
fold's database for how each pair was taught); runs no server. A variant rewrites the status of the reviewer's
suggestions as a rule change would (`--confirmed-floor V`: the list's readings of a confirmed name below V wait for
the reviewer; `--by-hand-every-time V`: a pair taught once by hand whose words the reviewer changed every time they
were heard in that call applies from a language-model gain of V), and the table gives the loop's figures for the run
as kept and for each variant, with the yardstick. Faithful for a rule that only changes what a kept suggestion's
status is; a rule that changes which reading keeps a span needs a run (`loop_check_folds`). Used to choose, then a run
to confirm.

    python -m bench.measure.loop_rescore DIR [--confirmed-floor 0.35] [--by-hand-every-time -6]

The rows: the run as kept, each rule alone, and both together.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import bench_file, yardstick
from bench.measure.loop_check_folds import (
    fixed_by,
    fixed_by_itself,
    loop_check,
    scored_together,
    second_half_errors,
)
from bench.measure.untaught_lost import fold_rows
from namesake.domain.types import REVIEWER_DECIDES
from namesake.reliability import memory_policy as policy

Suggestion = dict[str, Any]
Variant = Callable[[Suggestion], Suggestion]
Span = tuple[str, int, int]
# flags under which a reviewer decides, or the memory says nothing: a variant never lets such a suggestion through
HELD = (*REVIEWER_DECIDES, "contested", "remembered_conflict")


def accepted_spans(kept: Path) -> dict[str, list[Span]]:
    """The spans of the suggestions each reviewer accepted in a first half (not their fixes by hand), by the call's
    transcript id, from each fold's database: `loop_check.py`'s rule of how a pair was taught."""
    spans: dict[str, list[Span]] = collections.defaultdict(list)
    query = ("SELECT transcript_id, segment_id, start_char, end_char FROM suggestions WHERE status = 'validated' "
             "AND source <> 'manual' AND transcript_id LIKE '%--first-%'")  # fmt: skip
    for tid, sid, start, end in fold_rows(kept, query):
        spans[str(tid).split("--first")[0]].append((str(sid), int(start), int(end)))
    return spans


def taught_by_accepting(y: Any, call: dict[str, Any], error: dict[str, Any], accepted: list[Span]) -> bool:
    """Whether the reviewer accepted a suggestion over some first-half error of this pair (else: taught by hand)."""
    whole = call["segments"]
    pair = (y.norm(error["hyp_span"]), y.norm(error["ref_span"]))
    return any(
        (y.norm(g["hyp_span"]), y.norm(g["ref_span"])) == pair
        and any(sid == seg["id"] and a < g["end"] and g["start"] < e for sid, a, e in accepted)
        for seg in whole[: len(whole) // 2]
        for g in seg["errors"]
    )


def confirmed_floor(v: float) -> Variant:
    """The list's automatic readings of a confirmed name below confidence v wait for the reviewer."""

    def rule(s: Suggestion) -> Suggestion:
        sig = s["signals"]
        low = sig.get("name_confirmed") and sig.get("remembered") != 1.0 and s["confidence"] < v
        return {**s, "status": "pending"} if low and s["status"] == "auto_applied" else s

    return rule


def by_hand_every_time(v: float) -> Variant:
    """An everyday pair taught once by hand, its words changed every time they were heard there, applies from gain v."""

    def rule(s: Suggestion) -> Suggestion:
        sig, gain = s["signals"], s["signals"].get("lm_gain")
        lets = (
            s["status"] == "pending" and sig.get("remembered") == 1.0 and sig.get("remembered_manual")
            and sig.get("remembered_frequency", 1.0) < 2 and sig.get("remembered_left_alone") == 0
            and sig.get("remembered_everyday", 0.0) >= policy.EVERYDAY
            and (sig.get("remembered_context") or 0.0) < policy.SAME_CONTEXT
            and not (len(s["original"].split()) == 1 and sig["remembered_everyday"] >= policy.FUNCTION_GRADE)
            and gain is not None and gain >= v and not any(sig.get(f) for f in HELD)
        )  # fmt: skip
        return {**s, "status": "auto_applied"} if lets else s

    return rule


def _then(first: Variant, second: Variant) -> Variant:
    """Both rules, one after the other."""
    return lambda s: second(first(s))


def rewritten(kept: Path, variant: Variant, into: Path) -> list[Path]:
    """A copy of each fold's scored folder with the reviewer's suggestions rewritten by the variant."""
    out = []
    for i, d in enumerate(sorted(kept.glob("fold-*-tmp/loopcheck-*"))):
        nd = into / f"fold-{i}"
        nd.mkdir()
        (nd / "second.jsonl.gz").write_bytes((d / "second.jsonl.gz").read_bytes())
        (nd / "fresh.jsonl").write_text((d / "fresh.jsonl").read_text())
        lines = []
        for p in map(json.loads, (d / "mem.jsonl").open()):
            lines.append(json.dumps({**p, "suggestions": [variant(s) for s in p["suggestions"]]}) + "\n")
        (nd / "mem.jsonl").write_text("".join(lines))
        out.append(nd)
    return out


def figures(folders: list[Path], calls: dict[str, dict[str, Any]], accepted: dict[str, list[Span]]) -> dict[str, Any]:
    """The loop's figures over the folders: repeats by how they were taught, untaught_lost, and the yardstick's."""
    y, check = yardstick(), loop_check()
    c: collections.Counter[str] = collections.Counter()
    for tid, seg, g, taught, got in second_half_errors(folders, calls):
        auto = fixed_by_itself(y, seg, g, got["mem"])
        if not taught:
            fresh = fixed_by_itself(y, seg, g, got["fresh"])
            c["untaught_fresh"] += fresh
            c["untaught_lost"] += fresh and not auto
            continue
        how = "accepted" if taught_by_accepting(y, calls[tid], g, accepted.get(tid, [])) else "by_hand"
        everyday = max((check.zipf(w) for w in g["hyp_span"].split()), default=0.0) >= 4.0
        for kind in ("all", how) + (("everyday",) if everyday else ()):
            c[kind] += 1
            c[f"{kind}_auto"] += auto
            c[f"{kind}_any"] += fixed_by(y, seg, g, got["mem"])
    out: dict[str, Any] = dict(c)
    for lab, summary in scored_together(folders).items():
        out |= {f"{lab}_EER_auto": summary["EER_auto"], f"{lab}_harm_auto": summary["harm_auto"]}
    return out


def row(name: str, f: dict[str, Any]) -> str:
    """One line of the table."""

    def share(kind: str, view: str) -> str:
        return f"{f.get(f'{kind}_{view}', 0) / max(1, f.get(kind, 0)):.1%}"

    eer = f["mem_EER_auto"] / f["fresh_EER_auto"] - 1
    return (f"| {name} | {share('all', 'auto')} / {share('all', 'any')} | {share('by_hand', 'auto')} "
            f"| {share('accepted', 'auto')} / {share('accepted', 'any')} | {share('everyday', 'auto')} "
            f"| {f['mem_EER_auto']:.4f} ({eer:+.1%}) | {f['mem_harm_auto']:.2%} ({f['fresh_harm_auto']:.2%}) "
            f"| {f.get('untaught_lost', 0)} of {f.get('untaught_fresh', 0)} |")  # fmt: skip


def main() -> None:
    """The kept run's figures, then each variant's."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kept", type=Path, help="a loop_check_folds --keep folder")
    ap.add_argument("--confirmed-floor", type=float, help="CONFIRMED_FLOOR to read")
    ap.add_argument("--by-hand-every-time", type=float,
                    help="the gain from which a once-by-hand pair changed every time applies")  # fmt: skip
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    a = ap.parse_args()
    with gzip.open(bench_file(a.file), "rt") as fh:
        calls = {t["transcript_id"]: t for t in map(json.loads, fh)}
    accepted = accepted_spans(a.kept)
    rules: list[tuple[str, Variant]] = []
    if a.confirmed_floor is not None:
        rules.append((f"confirmed names from {a.confirmed_floor:g}", confirmed_floor(a.confirmed_floor)))
    if a.by_hand_every_time is not None:
        v = a.by_hand_every_time
        rules.append((f"once by hand, changed every time, from {v:g}", by_hand_every_time(v)))
    variants: list[tuple[str, Variant]] = [("as kept", lambda s: s), *rules]
    if len(rules) > 1:
        variants.append((" + ".join(name for name, _ in rules), functools.reduce(_then, (r for _, r in rules))))
    print("| reviewer's suggestions | repeats auto / suggested | by hand auto | accepted auto / suggested "
          "| everyday auto | second halves' EER_auto (against a fresh user) | harm_auto (fresh user) "
          "| untaught_lost |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name, variant in variants:
        with tempfile.TemporaryDirectory() as tmp:
            print(row(name, figures(rewritten(a.kept, variant, Path(tmp)), calls, accepted)), flush=True)


if __name__ == "__main__":
    main()
