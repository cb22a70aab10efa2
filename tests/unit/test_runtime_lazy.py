"""The language model is loaded when first used, not when the stores open: `analyze --workers` never runs it here."""

from __future__ import annotations

from typing import Any

import pytest

from namesake.adapters import runtime as runtime_module
from namesake.adapters.runtime import Runtime
from namesake.core.settings import Settings


def test_the_language_model_is_loaded_on_first_use_and_only_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Settings] = []

    def build(settings: Settings) -> Any:
        loads.append(settings)
        return None  # as when the model is off or cannot load

    monkeypatch.setattr(runtime_module, "build_language_model", build)
    stores: Any = None
    rt = Runtime(Settings(), stores, stores, stores, None, runtime_module.NOT_LOADED)
    assert loads == []
    assert rt.language_model is None and rt.language_model is None
    assert len(loads) == 1
