"""Settings: seed names read from the environment, validated, no I/O at construction."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from namesake.core.settings import Settings, describe_invalid, get_settings


def test_seed_names_are_read_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_PROMPT_LIST_CAP", "12")
    monkeypatch.setenv("RELIABILITY_CORRECTIONS_MEMORY_DEDUPE_THRESHOLD", "0.9")
    monkeypatch.setenv("NAMESAKE_API_KEYS", "a, b")
    s = get_settings()
    assert s.llm_prompt_list_cap == 12
    assert s.reliability_corrections_memory_dedupe_threshold == 0.9
    assert s.namesake_api_keys == ["a", "b"]


@pytest.mark.parametrize(
    "bad",
    [
        {"reliability_corrections_memory_dedupe_threshold": 1.5},
        {"llm_prompt_list_cap": 0},
        {"reliability_suggest_threshold": 0.95, "reliability_auto_apply_threshold": 0.9},
        {"reliability_read_suggest_threshold": 0.7, "reliability_read_auto_apply_threshold": 0.62},
        {"reliability_read_from": 0.05},
        {"llm_provider": "openai"},
        {"embedding_backend": "bge-m3"},
        {"namesake_env": "production", "database_url": "postgresql://x/y"},
    ],
)
def test_unsafe_or_out_of_range_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Settings(**bad)  # type: ignore[arg-type]


def test_a_dotenv_file_is_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("LLM_PROMPT_LIST_CAP=7\nLLM_BATCH_SIZE=3\n")
    monkeypatch.setenv("LLM_BATCH_SIZE", "5")
    s = get_settings()
    assert s.llm_prompt_list_cap == 7 and s.llm_batch_size == 5


def test_an_invalid_setting_is_named_as_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELIABILITY_AUTO_APPLY_THRESHOLD", "2")
    with pytest.raises(ValidationError) as err:
        get_settings()
    assert describe_invalid(err.value).startswith("RELIABILITY_AUTO_APPLY_THRESHOLD: ")


def test_the_jobs_run_in_the_server_on_the_embedded_default_and_not_beside_servers() -> None:
    from namesake.core.settings import jobs_run_here

    assert jobs_run_here(Settings(database_url=None)) is True
    assert jobs_run_here(Settings(database_url="postgresql://x/y")) is False
    assert jobs_run_here(Settings(database_url="postgresql://x/y", jobs_enabled=True)) is True
    assert jobs_run_here(Settings(database_url=None, jobs_enabled=False)) is False


def test_a_removed_or_misspelt_setting_is_named_not_silently_ignored(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RELIABILITY_RAG_CANONICAL_MAX_ITEMS", "50")
    monkeypatch.setenv("RELIABILITY_AUTO_APLY_THRESHOLD", "0.3")
    monkeypatch.setenv("NAMESAKE_BENCH_DATA", "/data")  # the benches' own variable
    monkeypatch.setenv("RELIABILITY_V5_CANONICAL_LIST_CAP", "9")  # renamed
    with caplog.at_level("WARNING", logger="namesake.core.settings"):
        get_settings()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "RELIABILITY_RAG_CANONICAL_MAX_ITEMS is set but no longer read" in said
    assert "LLM_PROMPT_LIST_CAP" in said  # what to set instead
    assert "RELIABILITY_AUTO_APLY_THRESHOLD is set but is not a namesake setting" in said
    assert "RELIABILITY_V5_CANONICAL_LIST_CAP is set but no longer read: renamed LLM_PROMPT_LIST_CAP" in said
    assert "NAMESAKE_BENCH_DATA" not in said and len(caplog.records) == 3
