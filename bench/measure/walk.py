"""A transcript's walk through analysis, as a reader following the code would take it: the files its stages visit,
how often the walk comes back to a file it had left, and which files it keeps coming back to.

Every function of `src/namesake` that the run calls is taken in the order it is first called (a reader reads a
function once, with the comprehensions, lambdas and functions written inside it); a *visit* is a run of those
functions in one file, a *return* a visit to a file already left.
The default is the shipped pipeline on the bundled English meeting, the language model read as shipped.

    python -m bench.measure.walk [--json FILE] [--top 8] [--lm none]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from namesake.analysis.inputs import TranscriptIn, to_segments
from namesake.core.settings import Settings
from namesake.reliability.canonical import aggregate_payloads
from namesake.reliability.pipeline import PipelineInputs, run_stages

SRC = Path(__file__).resolve().parents[2] / "src"
SAMPLE = SRC / "namesake" / "samples" / "meeting_en.json"


def first_calls(inputs: PipelineInputs, settings: Settings) -> list[tuple[str, str]]:
    """(file, function) of every namesake function the stages call, in the order each is first called; what is
    written inside a function (`f.<locals>.g`, a comprehension, a lambda) is read with it, as `f`."""
    seen: dict[tuple[str, str], None] = {}
    root = str(SRC / "namesake")

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(root):
            key = (frame.f_code.co_filename[len(root) + 1 :], frame.f_code.co_qualname.split(".<locals>")[0])
            seen.setdefault(key, None)

    sys.setprofile(profile)
    try:
        run_stages(inputs, settings)
    finally:
        sys.setprofile(None)
    return list(seen)


def walk(calls: list[tuple[str, str]]) -> dict[str, Any]:
    """Visits (runs of one file), returns (a visit to a file already left) and the files visited most."""
    visits = [f for i, (f, _) in enumerate(calls) if i == 0 or calls[i - 1][0] != f]
    left: set[str] = set()
    returns = 0
    for i, f in enumerate(visits):
        returns += f in left
        if i:
            left.add(visits[i - 1])
    return {"functions": len(calls), "files": len({f for f, _ in calls}), "visits": len(visits),
            "returns": returns, "most_visited": Counter(visits).most_common()}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Print the walk of one analysis of the bundled meeting."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="write the walk here as well")
    ap.add_argument("--top", type=int, default=8, help="how many of the most visited files to list")
    ap.add_argument("--lm", default=None, help="RELIABILITY_LANGUAGE_MODEL for the run (default: as shipped)")
    a = ap.parse_args(argv)
    t = TranscriptIn.model_validate(json.loads(SAMPLE.read_text()))
    settings = Settings(llm_provider="none", **({"reliability_language_model": a.lm} if a.lm else {}))
    inputs = PipelineInputs(to_segments(t), aggregate_payloads([t.canonical_entities or {}]), language=t.language)
    run_stages(inputs, settings)  # warm: imports and caches are not the walk
    result = walk(first_calls(inputs, settings))
    print(
        f"| functions | files | visits | returns to a file left |\n|---|---|---|---|\n"
        f"| {result['functions']} | {result['files']} | {result['visits']} | {result['returns']} |"
    )
    print("\nmost visited: " + ", ".join(f"{f} {n}" for f, n in result["most_visited"][: a.top]))
    if a.json:
        a.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
