"""A package's face that costs nothing until a name is asked: each name imported from its module on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_names(package: str, modules: dict[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The face's module `__getattr__`: `from namesake.P import x` loads only x's module (the CLI starts fast)."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
