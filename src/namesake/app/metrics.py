"""Prometheus metrics of one app (a registry per app, so tests and replicas never share counters)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from namesake.domain import SuggestionStatus


@dataclass
class Metrics:
    """Every counter namesake exports at /metrics."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        # the process (memory, CPU, open files) and the interpreter (GC, version) beside namesake's own
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        self.requests = Counter("namesake_http_requests", "HTTP requests", ["method", "route", "status"], registry=r)
        self.latency = Histogram("namesake_http_request_seconds", "HTTP latency", ["method", "route"], registry=r)
        self.candidates = Counter("namesake_candidates", "Candidates spotted", registry=r)
        self.gate_hits = Counter("namesake_gate_hits", "Spans let through untouched by the gate", registry=r)
        self.suggestions = Counter("namesake_suggestions", "Suggestions made", ["status"], registry=r)
        self.llm_calls = Counter("namesake_llm_calls", "LLM calls", registry=r)
        self.llm_rate_limited = Counter("namesake_llm_rate_limited", "Runs stopped by an LLM 429", registry=r)
        self.llm_invalid = Counter("namesake_llm_invalid_items", "LLM answer items rejected", registry=r)
        self.memory_writes = Counter("namesake_memory_writes", "Corrections-memory writes", ["outcome"], registry=r)
        self.compensations = Counter("namesake_memory_compensations", "Qdrant writes undone", registry=r)
        self.failsoft_reads = Counter("namesake_memory_failsoft_reads", "Memory reads that failed soft", registry=r)
        self.promotions = Counter("namesake_promotions", "Corrections promoted", registry=r)
        self.analyses_cancelled = Counter(
            "namesake_analyses_cancelled", "Analyses stopped: their client left or the server stopped", registry=r
        )
        self.promotion_alerts = Counter("namesake_promotion_alerts", "Promotion runs over threshold", registry=r)
        self.analyses_held = Gauge(
            "namesake_analyses_held", "Analyses admitted, not yet answered (ANALYSIS_QUEUE_LIMIT)", registry=r
        )
        self.analyses_waiting = Gauge(
            "namesake_analyses_waiting_turn", "Analyses held that wait for a turn (ANALYSIS_RUNNING_LIMIT)", registry=r
        )

    def watch(self, held: Callable[[], float], waiting: Callable[[], float]) -> None:
        """Read the two gauges off the server's admission and turns whenever /metrics is scraped."""
        self.analyses_held.set_function(held)
        self.analyses_waiting.set_function(waiting)

    def observe_analysis(self, stats: dict[str, Any]) -> None:
        """Fold one analysis' stats into the counters."""
        self.candidates.inc(stats.get("candidates", 0))
        self.gate_hits.inc(stats.get("gate_hits", 0))
        for status in SuggestionStatus.undecided():  # RunStats counts them under the statuses' names
            self.suggestions.labels(status.value).inc(stats.get(status.value, 0))
        llm = stats.get("llm") or {}
        self.llm_calls.inc(llm.get("calls", 0))
        self.llm_invalid.inc(llm.get("invalid_items", 0))
        if llm.get("rate_limited"):
            self.llm_rate_limited.inc()
