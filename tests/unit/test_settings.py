"""Settings: seed names read from the environment, validated, no I/O at construction."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from namesake.settings import Settings, get_settings


def test_seed_names_are_read_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELIABILITY_V5_CANONICAL_LIST_CAP", "12")
    monkeypatch.setenv("RELIABILITY_CORRECTIONS_MEMORY_DEDUPE_THRESHOLD", "0.9")
    monkeypatch.setenv("NAMESAKE_API_KEYS", "a, b")
    s = get_settings()
    assert s.reliability_v5_canonical_list_cap == 12
    assert s.reliability_corrections_memory_dedupe_threshold == 0.9
    assert s.namesake_api_keys == ["a", "b"]


@pytest.mark.parametrize(
    "bad",
    [
        {"reliability_corrections_memory_dedupe_threshold": 1.5},
        {"reliability_v5_canonical_list_cap": 0},
        {"reliability_suggest_threshold": 0.95, "reliability_auto_apply_threshold": 0.9},
        {"llm_provider": "openai"},
        {"embedding_backend": "bge-m3"},
        {"namesake_env": "production", "database_url": "postgresql://x/y"},
    ],
)
def test_unsafe_or_out_of_range_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Settings(**bad)  # type: ignore[arg-type]
