"""The pure reliability pipeline: spot, gate, score, read and decide. It takes values and ports, returns values, and
imports nothing from the floors above it."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.reliability.apply import WRITTEN_IN, corrected_segments, corrected_text, suggestion_counts
    from namesake.reliability.canonical import (
        TYPE_LISTS,
        aggregate_payloads,
        chunk_payloads,
        chunk_point_id,
        validate_entities,
    )
    from namesake.reliability.edge_forms import EDGE_FORM
    from namesake.reliability.memory_policy import (
        EVERYDAY,
        BoostParams,
        boost_for,
        from_memory,
        is_one_off,
        take_remembered_final,
    )
    from namesake.reliability.pipeline import (
        BoostStats,
        MemoryBooster,
        PipelineInputs,
        RunStats,
        run_stages,
        warm_stages,
        would_read,
    )
    from namesake.reliability.ports import LanguageModel, LLMProvider, Window
    from namesake.reliability.reading import GAIN
    from namesake.reliability.recall import everyday_zipf
    from namesake.reliability.refusal_policy import best_read, refusal_key
    from namesake.reliability.score import Scorer
    from namesake.reliability.whole import WHOLE, Completion, completion, listed

__all__ = [
    "EDGE_FORM",
    "EVERYDAY",
    "GAIN",
    "TYPE_LISTS",
    "WHOLE",
    "WRITTEN_IN",
    "BoostParams",
    "BoostStats",
    "Completion",
    "LLMProvider",
    "LanguageModel",
    "MemoryBooster",
    "PipelineInputs",
    "RunStats",
    "Scorer",
    "Window",
    "aggregate_payloads",
    "best_read",
    "boost_for",
    "chunk_payloads",
    "chunk_point_id",
    "completion",
    "corrected_segments",
    "corrected_text",
    "everyday_zipf",
    "from_memory",
    "is_one_off",
    "listed",
    "refusal_key",
    "run_stages",
    "suggestion_counts",
    "take_remembered_final",
    "validate_entities",
    "warm_stages",
    "would_read",
]
__getattr__ = lazy_names(__name__, __file__)
