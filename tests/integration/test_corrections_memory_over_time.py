"""A taught fix over time: it applies until its date and use renews it; a reinforcement racing a supersede."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from namesake.adapters.runtime import Runtime
from namesake.corrections_memory.consolidation import WriteOutcome
from namesake.corrections_memory.reader import CorrectionsMemoryReader
from namesake.corrections_memory.repository import active_corrections, list_corrections
from namesake.corrections_memory.writer import CorrectionsMemoryWriter, WriteResult
from namesake.domain.types import MemoryScope
from tests.integration.memory_kit import candidate, correction, writer_of


def test_a_taught_fix_applies_until_its_date_and_teaching_it_again_renews_it(memory: Runtime) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = {"now": start}
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings,
                                    clock=lambda: clock["now"])  # fmt: skip
    days = memory.settings.reliability_corrections_memory_quarantine_days

    def boosted(at: datetime) -> bool:
        reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: at)
        cand = candidate("Mitnou")
        reader.boost("u1", [cand])
        return cand.memory_score is not None

    writer.record(correction(source_suggestion_id="a"))
    [row] = list_corrections(memory.db, "u1", now=start)
    assert row["state"] == "applying" and row["applies_until"] == (start + timedelta(days=days)).isoformat()
    clock["now"] = start + timedelta(days=days - 10)
    writer.record(correction(source_suggestion_id="b"))  # taught again before it expired: renewed from now
    renewed = clock["now"] + timedelta(days=days)
    [row] = list_corrections(memory.db, "u1", now=clock["now"])
    assert row["frequency"] == 2 and row["applies_until"] == renewed.isoformat()
    after_first_date = start + timedelta(days=days + 5)
    assert boosted(after_first_date) and active_corrections(memory.db, "u1", now=after_first_date)
    later = renewed + timedelta(days=1)
    assert not boosted(later) and active_corrections(memory.db, "u1", now=later) == []
    [row] = list_corrections(memory.db, "u1", now=later)
    assert row["state"] == "expired" and row["applies_until"] is None  # said, not silently listed as active


def test_a_fix_applied_by_itself_every_week_for_three_months_still_applies(memory: Runtime) -> None:
    """Each weekly call applies the fix (the analysis renews what it applied); one never applied again expires."""

    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = {"now": start}
    writer = CorrectionsMemoryWriter(memory.db, memory.vectors, memory.embedder, memory.settings,
                                    clock=lambda: clock["now"])  # fmt: skip

    def applies(at: datetime, original: str) -> bool:
        reader = CorrectionsMemoryReader(memory.vectors, memory.embedder, memory.settings, clock=lambda: at)
        cand = candidate(original)
        reader.boost("u1", [cand])
        in_pg = any(c.original == original for c in active_corrections(memory.db, "u1", now=at))
        assert in_pg == (cand.memory_score is not None)  # both stores agree on the date
        return in_pg

    writer.record(correction(source_suggestion_id="a"))  # Mitnou → MeetNoo: applied every week
    writer.record(correction(original="Zorbex", final="Zorblax", source_suggestion_id="b"))  # never applied again
    for week in range(1, 14):
        clock["now"] = start + timedelta(weeks=week)
        assert applies(clock["now"], "Mitnou"), f"week {week}"
        assert writer.renew_applied("u1", [("mitnou", "MeetNoo")]) == 1  # as the analysis that applied it does
    assert clock["now"] - start >= timedelta(days=90)
    assert not applies(clock["now"], "Zorbex")  # taught once, 30 days: gone long ago
    assert writer.renew_applied("u1", [("Zorbex", "Zorblax")]) == 0  # an expired fix did not apply: not renewed
    [row] = [c for c in list_corrections(memory.db, "u1", now=clock["now"]) if c["original"] == "Mitnou"]
    assert row["state"] == "applying" and row["frequency"] == 1  # renewed, not counted as taught again


def test_a_reinforcement_racing_a_supersede_becomes_a_new_correction_not_a_503(memory: Runtime) -> None:
    """ "Steffy" finds "Steffi"'s row (cosine 0.957, same final) just before "Steffi" is given another final."""
    import threading

    writer = writer_of(memory)
    writer.record(correction(original="Steffi", final="Cepheid"))
    found, go, outcome = threading.Event(), threading.Event(), {}
    slow = writer_of(memory)
    top1 = slow._semantic_top1

    def paused_after_the_twin_is_found(*args: Any) -> Any:
        hit = top1(*args)  # "Steffi"'s row, still active
        found.set()
        go.wait(timeout=30)  # a slow request: the supersede commits meanwhile
        return hit

    slow._semantic_top1 = paused_after_the_twin_is_found  # type: ignore[method-assign]

    def twin() -> None:
        try:
            outcome["result"] = slow.record(correction(original="Steffy", final="Cepheid"))
        except Exception as exc:  # what used to happen: the point it reinforced was gone (503)
            outcome["error"] = exc

    racer = threading.Thread(target=twin)
    racer.start()
    assert found.wait(timeout=30)
    other_place = correction(
        original="Steffi", final="Cepheid Inc", scope=MemoryScope.LIST
    )  # not a conflict: supersedes
    assert writer.record(other_place).outcome is WriteOutcome.SUPERSEDED
    go.set()
    racer.join(timeout=30)
    assert "error" not in outcome, outcome
    result = outcome["result"]
    assert isinstance(result, WriteResult) and result.outcome is WriteOutcome.NEW
    finals = {c["original"]: c["final"] for c in list_corrections(memory.db, "u1")}
    assert finals == {"Steffi": "Cepheid Inc", "Steffy": "Cepheid"}
