"""What a one-process run starts before its stores are open: the stages' tables, then the language model when the
first transcripts will read a window. The embedded PostgreSQL starts in a process of its own meanwhile, so the
waits overlap instead of adding up; a run whose transcripts read no window never loads the model."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from namesake.analysis.inputs import CheckedTranscript, to_segments
from namesake.core import Settings
from namesake.reliability import PipelineInputs, aggregate_payloads, chunk_payloads, warm_stages, would_read

log = logging.getLogger(__name__)

# How many of a batch's first transcripts are looked at for a window to read (each costs its pure stages once more).
LOOK_AT = 3


def start_early(settings: Settings, transcripts: Sequence[CheckedTranscript]) -> threading.Thread:
    """A thread that warms the stages and, where one of the first transcripts reads a window, loads the model."""

    def work() -> None:
        try:
            warm_stages(settings)
            if settings.reliability_language_model != "none" and any(
                would_read(early_inputs(t), settings) for t in transcripts[:LOOK_AT]
            ):
                from namesake.language_model import build_language_model, warm_read

                model = build_language_model(settings)  # the process's model: the run's first reading finds it
                if model is not None:
                    warm_read(model)
        except Exception as exc:  # the run loads the same things, and says what is wrong
            log.debug("starting early failed: %s", exc)

    thread = threading.Thread(target=work, name="start-early", daemon=True)
    thread.start()
    return thread


def early_inputs(checked: CheckedTranscript) -> PipelineInputs:
    """The stages' inputs as far as the transcript alone says them: its segments and the lists it sent (the run adds
    what is stored: earlier lists, promoted names, the user's memory)."""
    t = checked.transcript
    lists = aggregate_payloads(chunk_payloads(t.transcript_id, checked.entities or {}))
    return PipelineInputs(to_segments(t), lists, language=t.language)
