"""What the memory took away: the right automatic fixes of errors nobody taught that a fresh user gets and the
reviewer does not (`loop_check.py`'s `untaught_lost`), each with what the reviewer got there instead, by kind.

Reads the folder `loop_check_folds --keep DIR` kept (each fold's second halves and both prediction sets); runs no
server. The kinds, from the reviewer's suggestions over the error's words:

- nothing proposed: the spotter's reading is gone for the reviewer (a pair they refused, exactly);
- contested: a pair both made and refused, left to the reviewer;
- a taught pair wins the span: a fix the reviewer taught, on these or overlapping words, takes the span;
- a final swapped in from a near original: the memory put a final taught on other words in place of the list's;
- another reading wins the span: the list's own reading, but another one.

`--unsuggested` lists instead the repeats of a taught pair that no suggestion of the reviewer's makes right (what
"suggested at all" misses), by what stood over their words: nothing proposed; a right suggestion undone by another
on the same name (applied together they make it wrong again); the memory's own pair with another final or span; the
list's other reading.

`--held` splits the taught repeats by whether the reviewer's memory holds their pair at all after the first half
(read from each fold's database): `loop_check.py` counts every first-half error's pair as taught, also where the
reviewer accepted another suggestion over those words (another span or final: "e s" → EIS over "s i s" → Isaias) or
where the write reinforced another original with the same final (a semantic twin: "ANNEXES" → Amex onto "ANY EX").

`--pending` lists the repeats a suggestion makes right but nothing fixes by itself (what "fixed automatically"
misses), by how the right suggestion's pair was taught (by hand, by editing, by accepting, or not the memory's),
the taught words (rare; everyday: Zipf ≥ 4; function: ≥ 5.5), times taught and the suggestion's status.

    python -m bench.measure.loop_check_folds --fold-models F --keep DIR
    python -m bench.measure.untaught_lost DIR [--examples 20]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import bench_file, yardstick
from bench.measure.loop_check_folds import fixed_by, fixed_by_itself, second_half_errors
from namesake.adapters.db import sqlalchemy_url, start_embedded_postgres, stop_embedded_postgres
from namesake.core import compact
from namesake.reliability.memory_policy import EVERYDAY, FUNCTION_GRADE


@dataclass(frozen=True)
class Lost:
    """One right fix the memory took away, and what stood over its words for the reviewer."""

    transcript_id: str
    segment_id: str
    heard: str
    right: str
    fresh: list[dict[str, Any]]
    mem: list[dict[str, Any]]  # the reviewer's

    @property
    def kind(self) -> str:
        """Why the reviewer did not get it (the module's list of kinds)."""
        return kind_of(self.mem)


def kind_of(mem: list[dict[str, Any]]) -> str:
    """The kind of a loss, from the reviewer's suggestions over the error's words."""
    if not mem:
        return "nothing proposed"
    if any(s.get("signals", {}).get("contested") for s in mem):
        return "contested"
    if any(s.get("source") == "memory" and float(s.get("signals", {}).get("remembered", 0.0)) >= 1.0 for s in mem):
        return "a taught pair wins the span"
    if any(s.get("source") == "memory" for s in mem):
        return "a final swapped in from a near original"
    return "another reading wins the span"


def unsuggested_kind(mem: list[dict[str, Any]], right_there: bool) -> str:
    """Why no suggestion made a taught repeat right, from the reviewer's suggestions over its words and whether one of
    them alone would have."""
    if not mem:
        return "nothing proposed"
    if right_there:
        return "a right suggestion undone by another on the same name"
    if any(s.get("source") == "memory" or "remembered" in s.get("signals", {}) for s in mem):
        return "the memory's pair, another final or span"
    return "the list's other reading"


def _taught_misses(
    kept: Path, file: str, fixed: Callable[..., bool]
) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    """(yardstick, segment, error, the reviewer's suggestions over it) for every taught repeat that `fixed` (the
    loop's `fixed_by` or `fixed_by_itself`) says the reviewer's suggestions leave wrong."""
    y, calls = yardstick(), _calls(file)
    for _, seg, g, taught, got in second_half_errors(sorted(kept.glob("fold-*-tmp/loopcheck-*")), calls):
        if taught and not fixed(y, seg, g, got["mem"]):
            yield y, seg, g, _over(got["mem"], seg["id"], g)


def unsuggested_in(kept: Path, file: str = "earnings21.jsonl.gz") -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(kind, heard, right, the reviewer's suggestions over it) for every taught repeat no suggestion makes right."""
    out = []
    for y, seg, g, over in _taught_misses(kept, file, fixed_by):
        right_there = any(y.entity_ok(g, *y.apply(seg["text"], [s])) for s in over)
        out.append((unsuggested_kind(over, right_there), g["hyp_span"], g["ref_span"], over))
    return out


def unsuggested_report(
    rows: list[tuple[str, str, str, list[dict[str, Any]]]],
    examples: int,
    title: str = "why no suggestion made a taught repeat right",
) -> str:
    """The repeats by kind, then up to `examples` of each kind."""
    kinds = collections.Counter(k for k, *_ in rows)
    out = [f"| {title} | repeats |", "|---|---|"]
    out += [f"| {k} | {n} |" for k, n in kinds.most_common()]
    out.append(f"| all | {len(rows)} |")
    for kind, _ in kinds.most_common() if examples else ():
        out.append(f"\n{kind}:")
        for _, heard, right, over in [r for r in rows if r[0] == kind][:examples]:
            out.append(f"  {heard!r} → {right!r}: " + "; ".join(_shown(s) for s in over))
    return "\n".join(out)


def pending_kind(s: dict[str, Any]) -> str:
    """How the pair of a right suggestion that was not applied was taught, its words and times, and its status."""
    g = s.get("signals", {})
    if "remembered" not in g:
        return f"not the memory's | {s['status']}"
    how = "by hand" if g.get("remembered_manual") else "edited" if g.get("remembered_edit") else "accepted"
    everyday = float(g.get("remembered_everyday", 0.0))
    words = "function" if everyday >= FUNCTION_GRADE else "everyday" if everyday >= EVERYDAY else "rare"
    times = "once" if float(g.get("remembered_frequency", 0.0)) <= 1 else "twice or more"
    left = g.get("remembered_left_alone")
    kept = "left alone ?" if left is None else "changed every time" if left == 0 else "left alone"
    return f"{how} | {words} | {times} | {kept} | {s['status']}"


def pending_in(kept: Path, file: str = "earnings21.jsonl.gz") -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(kind, heard, right, right suggestions) for each taught repeat a suggestion makes right and none by itself."""
    out = []
    for y, seg, g, over in _taught_misses(kept, file, fixed_by_itself):
        right = [s for s in over if y.entity_ok(g, *y.apply(seg["text"], [s]))]
        if right:
            out.append((pending_kind(right[0]), g["hyp_span"], g["ref_span"], right))
    return out


def fold_rows(kept: Path, query: str) -> Iterator[tuple[Any, ...]]:
    """The rows a query answers in each fold's database of a kept loop run, one fold's embedded server at a time."""
    from sqlalchemy import create_engine, text

    for data in sorted(kept.glob("fold-*-data")):
        url, server = start_embedded_postgres(data / "postgres")
        engine = create_engine(sqlalchemy_url(url))
        try:
            with engine.connect() as conn:
                yield from (tuple(row) for row in conn.execute(text(query)))
        finally:
            engine.dispose()
            stop_embedded_postgres(server)


def held_pairs(kept: Path) -> dict[str, set[tuple[str, str]]]:
    """Each reviewer's remembered pairs (compact original, compact final) after their first half, by the call's
    transcript id, from each fold's database (every correction row, superseded or in conflict too)."""
    held: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for tid, original, final in fold_rows(kept, "SELECT transcript_id, original, final FROM correction_mirror"):
        held[str(tid).split("--first")[0]].add((compact(str(original)), compact(str(final))))
    return held


def held_report(kept: Path, file: str = "earnings21.jsonl.gz") -> str:
    """The taught repeats fixed automatically and suggested, by whether the reviewer's memory holds their pair."""
    y, calls, held = yardstick(), _calls(file), held_pairs(kept)
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for tid, seg, g, taught, got in second_half_errors(sorted(kept.glob("fold-*-tmp/loopcheck-*")), calls):
        if taught:
            key = "held" if (compact(g["hyp_span"]), compact(g["ref_span"])) in held[tid] else "not held"
            counts[key, "n"] += 1
            counts[key, "auto"] += fixed_by_itself(y, seg, g, got["mem"])
            counts[key, "any"] += fixed_by(y, seg, g, got["mem"])
    rows = [
        "| taught repeats (loop_check.py's rule) | repeats | fixed automatically | suggested at all |",
        "|---|---|---|---|",
    ]
    for key, label in (("held", "the reviewer's memory holds the pair"), ("not held", "it holds no such pair")):
        n = max(1, counts[key, "n"])
        rows.append(f"| {label} | {counts[key, 'n']} | {counts[key, 'auto'] / n:.1%} | {counts[key, 'any'] / n:.1%} |")
    return "\n".join(rows)


def _calls(file: str) -> dict[str, dict[str, Any]]:
    """The bench file's transcripts by id: the first halves the reviewer taught from."""
    with gzip.open(bench_file(file), "rt") as fh:
        return {t["transcript_id"]: t for t in map(json.loads, fh)}


def _over(suggestions: list[dict[str, Any]], segment_id: str, error: dict[str, Any]) -> list[dict[str, Any]]:
    """The suggestions of a segment that touch the error's words."""
    return [
        s
        for s in suggestions
        if str(s["segment_id"]) == segment_id and s["start_char"] < error["end"] and error["start"] < s["end_char"]
    ]


def lost_in(kept: Path, file: str = "earnings21.jsonl.gz") -> list[Lost]:
    """Every untaught right fix a fresh user gets automatically and the reviewer does not, over the kept folds."""
    y, calls = yardstick(), _calls(file)
    out: list[Lost] = []
    for tid, seg, g, taught, got in second_half_errors(sorted(kept.glob("fold-*-tmp/loopcheck-*")), calls):
        if not taught and fixed_by_itself(y, seg, g, got["fresh"]) and not fixed_by_itself(y, seg, g, got["mem"]):
            over = {lab: _over(got[lab], seg["id"], g) for lab in got}
            out.append(Lost(tid, seg["id"], g["hyp_span"], g["ref_span"], **over))
    return out


def _shown(s: dict[str, Any]) -> str:
    """One suggestion in a line: words, final, status, confidence, and what the memory said of it."""
    g = s.get("signals", {})
    said = ("remembered", "remembered_frequency", "remembered_manual", "remembered_everyday", "remembered_context",
            "remembered_left_alone", "lm_gain", "contested", "refused", "extends_right_entity",
            "rewrites_canonical")  # fmt: skip
    memory = {k: round(float(g[k]), 2) for k in said if k in g}
    return f"{s['original']!r} → {s['final']!r} {s['status']} {s['confidence']:.2f} {s.get('source')} {memory or ''}"


def report(lost: list[Lost], examples: int) -> str:
    """The losses by kind, then up to `examples` of them with both users' suggestions."""
    kinds = collections.Counter(x.kind for x in lost)
    rows = ["| why the reviewer lost a right fix nobody taught | losses |", "|---|---|"]
    rows += [f"| {k} | {n} |" for k, n in kinds.most_common()]
    rows.append(f"| all | {len(lost)} |")
    for x in lost[:examples]:
        rows.append(f"\n{x.transcript_id} {x.segment_id}: {x.heard!r} → {x.right!r} ({x.kind})")
        rows += [f"  fresh: {_shown(s)}" for s in x.fresh] + [f"  reviewer: {_shown(s)}" for s in x.mem]
    return "\n".join(rows)


def main() -> None:
    """Read the kept folds and print the losses by kind."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kept", type=Path, help="the folder of loop_check_folds --keep")
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    ap.add_argument("--examples", type=int, default=20, help="losses shown one by one (0: the table only)")
    ap.add_argument("--unsuggested", action="store_true", help="the taught repeats no suggestion makes right instead")
    ap.add_argument("--pending", action="store_true", help="the taught repeats suggested but not fixed by themselves")
    ap.add_argument(
        "--held", action="store_true", help="the taught repeats by whether the reviewer's memory holds them"
    )
    a = ap.parse_args()
    if a.held:
        print(held_report(a.kept, a.file))
    elif a.unsuggested:
        print(unsuggested_report(unsuggested_in(a.kept, a.file), a.examples))
    elif a.pending:
        print(unsuggested_report(pending_in(a.kept, a.file), a.examples, "why a suggested repeat was not applied"))
    else:
        print(report(lost_in(a.kept, a.file), a.examples))


if __name__ == "__main__":
    main()
