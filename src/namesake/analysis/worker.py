"""What a worker process of `analysis.pool.StagePool` runs: the pure stages and their language model, nothing of the
stores, so that the fork server the workers come from imports only this (and the stages), not the service."""

from __future__ import annotations

from namesake.core import NamesakeError, Settings, set_thread_budget
from namesake.domain import Candidate
from namesake.language_model import build_language_model
from namesake.reliability import PipelineInputs, RunStats, run_stages, warm_stages


def warm_worker(settings: Settings, threads: int) -> None:
    """A worker process's start: its thread budget, the language model and the stages' tables, before the first
    transcript.

    A setting the models cannot be used with is the parent's to report (it checks them while its workers start,
    and exits 2): here it would only print a traceback beside that one line; a job would meet it again anyway.
    """
    set_thread_budget(threads)
    build_language_model(settings)
    try:
        warm_stages(settings)
    except NamesakeError:
        return


def run_in_worker(inputs: PipelineInputs, settings: Settings) -> tuple[list[Candidate], RunStats]:
    """The pure stages in a worker process, with that process's language model (loaded once per process)."""
    return run_stages(inputs, settings, language_model=build_language_model(settings))
