"""A package's face that costs nothing until a name is asked: each name imported from its module on first use."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path


def _typed_imports(init: str) -> dict[str, str]:
    """Name → module, from the face's `if TYPE_CHECKING:` imports: the one list of what it offers and from where."""
    where: dict[str, str] = {}
    for node in ast.parse(Path(init).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module:
                    where.update({a.asname or a.name: item.module for a in item.names})
    return where


def lazy_names(package: str, init: str) -> Callable[[str], object]:
    """The face's module `__getattr__`: `from namesake.P import x` loads only x's module (the CLI starts fast)."""
    where = _typed_imports(init)

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
