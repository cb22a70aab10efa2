"""The house plan holds: packages in layers, every import pointing down or across its own package, no circles."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "src" / "namesake"

# Each package's floor: a module may import its own package and the floors below it, never one above.
FLOORS = {
    "core": 0,
    "domain": 1,
    "reliability": 2,
    "language_model": 3,
    "adapters": 4,
    "users": 5,
    "transcripts": 6,
    "corrections_memory": 7,
    "analysis": 8,
    "review": 8,
    "jobs": 8,
    "app": 9,
    "api": 10,
    "cli": 10,
    "samples": 0,
}
# The package root itself (its version) is readable from every floor.
ROOT_MODULES = {"namesake"}


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every namesake module a file imports, lazily and under TYPE_CHECKING included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("namesake"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("namesake"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}"))
    return found


def _is_module(dotted: str) -> bool:
    base = ROOT.parent / dotted.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    files = [p for p in ROOT.rglob("*.py") if "migrations" not in p.parts]
    modules = {_module_of(p): p for p in files}
    return {m: {i for i in _imports(p) if i in modules and i != m} for m, p in modules.items()}


def _floor(module: str) -> int | None:
    parts = module.split(".")
    if module in ROOT_MODULES:
        return None
    return FLOORS[parts[1]]


def test_every_module_lives_in_a_package_but_the_entry_points() -> None:
    loose = sorted(p.name for p in ROOT.glob("*.py") if p.name not in {"__init__.py", "__main__.py", "cli.py"})
    assert loose == []


def test_every_package_has_a_floor_and_a_face() -> None:
    for package in (p for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert package.name in FLOORS, f"{package.name} has no floor in the house plan"
        init = package / "__init__.py"
        face = ast.get_docstring(ast.parse(init.read_text())) if init.is_file() else None
        assert face, f"{package.name}/__init__ says nothing"


def test_no_import_points_up() -> None:
    upward = [
        f"{m} -> {i}"
        for m, imported in _graph().items()
        for i in imported
        if (a := _floor(m)) is not None and (b := _floor(i)) is not None and b > a
    ]
    assert upward == []


def test_no_package_imports_a_sibling_of_its_own_floor_that_imports_it_back() -> None:
    edges = {
        (m.split(".")[1], i.split(".")[1])
        for m, imported in _graph().items()
        for i in imported
        if m not in ROOT_MODULES and i not in ROOT_MODULES and m.split(".")[1] != i.split(".")[1]
    }
    assert sorted((a, b) for a, b in edges if (b, a) in edges) == []


def test_no_import_circle_between_modules() -> None:
    graph = _graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert circles == []


def _exported(package: str) -> set[str]:
    """The names a package's face offers: its `__all__`."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {ast.literal_eval(e) for e in node.value.elts} if isinstance(node.value, ast.List) else set()
    return set()


def _private_reach(tree: ast.AST, own: str) -> list[str]:
    """Imports of another package's modules, or of a name its face does not offer."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("namesake.") and a.name.split(".")[1] != own]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("namesake."):
            parts = node.module.split(".")
            if parts[1] == own:
                continue
            if len(parts) > 2:
                found.append(node.module)
            else:
                found += [f"{node.module}.{a.name}" for a in node.names if a.name not in _exported(parts[1])]
    return found


def test_no_module_reaches_behind_another_packages_face() -> None:
    strays = {
        str(p.relative_to(ROOT)): reach
        for p in ROOT.rglob("*.py")
        if "migrations" not in p.parts and p.parent != ROOT
        and (reach := _private_reach(ast.parse(p.read_text()), p.relative_to(ROOT).parts[0]))
    }  # fmt: skip
    assert strays == {}


def test_the_face_check_sees_a_reach_behind_it() -> None:
    assert _private_reach(ast.parse("from namesake.reliability.score import dispose"), "api") == [
        "namesake.reliability.score"
    ]
    assert _private_reach(ast.parse("from namesake.domain import Nothing, Suggestion"), "api") == [
        "namesake.domain.Nothing"
    ]
    assert _private_reach(ast.parse("from namesake.reliability.score import dispose"), "reliability") == []


def test_every_name_a_face_offers_is_there() -> None:
    import importlib

    from namesake.core.faces import _typed_imports

    for init in ROOT.glob("*/__init__.py"):
        if "lazy_names(__name__" in init.read_text():
            typed = set(_typed_imports(str(init))) - {"lazy_names"}
            assert typed == _exported(init.parent.name) - {"lazy_names"}, f"{init.parent.name}: __all__ and its imports"

    for package in (p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()):
        module = importlib.import_module(f"namesake.{package}")
        assert [n for n in _exported(package) if not hasattr(module, n)] == [], package


@pytest.mark.parametrize("package", sorted(FLOORS))
def test_the_plan_names_only_packages_that_exist(package: str) -> None:
    assert (ROOT / package).is_dir() or (ROOT / f"{package}.py").is_file()


def test_the_drawing_sees_the_arrows_it_judges() -> None:
    graph = _graph()
    assert {"namesake.transcripts", "namesake.review", "namesake.app.metrics"} <= graph["namesake.app.services"]
    assert sum(len(v) for v in graph.values()) > 200


VOCABULARY_FIELDS = {"status", "action", "source"}


def _vocabulary() -> set[str]:
    from namesake.domain.types import CandidateSource, CorrectionStatus, ReviewAction, SuggestionStatus

    return {str(v) for enum in (CandidateSource, CorrectionStatus, ReviewAction, SuggestionStatus) for v in enum}


def _literal_uses(tree: ast.AST, words: set[str]) -> list[int]:
    """Lines where a status, action or source is compared with, passed as or assigned a bare string."""

    def bare(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words

    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and (bare(node.left) or any(bare(c) for c in node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg in VOCABULARY_FIELDS and bare(node.value):
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Assign) and bare(node.value):
            names = {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
            if names & VOCABULARY_FIELDS:
                lines.append(node.lineno)
    return lines


def test_no_status_action_or_source_is_a_bare_string_outside_its_enum() -> None:
    words = _vocabulary()
    found = {
        str(p.relative_to(ROOT)): lines
        for p in ROOT.rglob("*.py")
        if "migrations" not in p.parts and (lines := _literal_uses(ast.parse(p.read_text()), words))
    }
    assert found == {}


def test_the_literal_check_sees_a_bare_status() -> None:
    words = _vocabulary()
    assert _literal_uses(ast.parse('if row.status == "active": row.source = "manual"'), words) == [1, 1]
    assert _literal_uses(ast.parse("f(action='reject')"), words) == [1]
    assert _literal_uses(ast.parse("if row.status == CorrectionStatus.ACTIVE: pass"), words) == []


# Which package's store reads and writes each table: no other package names its model.
TABLE_OWNERS = {
    "User": "users",
    "ErasedUser": "users",
    "ErasedTranscript": "users",
    "Transcript": "transcripts",
    "SuggestionRow": "transcripts",
    "ReviewDecision": "transcripts",
    "CorrectionMirror": "corrections_memory",
    "CanonicalVocabulary": "corrections_memory",
    "ForgottenRefusal": "corrections_memory",
    "JobRun": "jobs",
}


def test_every_tables_sql_lives_in_its_store() -> None:
    strays = []
    for path in ROOT.rglob("*.py"):
        package = path.relative_to(ROOT).parts[0]
        if package == "adapters":  # the schema and its migrations
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "namesake.adapters.models":
                strays += [
                    f"{path.relative_to(ROOT)}: {a.name}"
                    for a in node.names
                    if a.name in TABLE_OWNERS and TABLE_OWNERS[a.name] != package
                ]
    assert strays == []


def test_every_table_has_an_owner() -> None:
    from namesake.adapters.models import Base

    assert {m.class_.__name__ for m in Base.registry.mappers} == set(TABLE_OWNERS)


# Names retired for one name per thing (docs/glossary.md); where a retired name may still be said, and why.
RETIRED = {
    "language_model/scorer.py": (),
    "preloaded_context_model": (),
    "Candidate.decision": (),
    "scorer.decide": (),
    "CorrectionMemoryWriter": (),
    "ReliabilityRagEnricher": (),
    "RELIABILITY_V5_CANONICAL_LIST_CAP": ("src/namesake/core/settings.py",),  # the warning naming its new name
    "reliability_v5_canonical_list_cap": (),
    "reliability.types": (),
    "SqlReviewRows": (),
    "decide_in": (),
    "history_in": (),
    "review_progress": (),
    "AnalysisService.list_transcripts": (),
    "Services.promote": (),
    "Services.corrections": (),
    "Services.vocabulary": (),
    "jobs.tasks.promote": (),
    "PreparedCorrection": (),
    "reliability_corrections_quarantine": (),
    "reliability/candidates.py": (),
    "reliability.candidates": (),
    "reliability/remembered.py": (),
    "reliability.remembered": (),
    "reliability/llm_stage.py": (),
    "reliability.llm_stage": (),
    "reliability/scorer.py": (),
    "reliability.scorer": (),
    "scorer.dispose": (),  # the migrations that made and renamed it are history, not read
}
DOCS = ROOT.parents[1] / "docs"


def _retired_in(path: Path) -> list[str]:
    """The retired names a file says where it may not."""
    text = path.read_text(encoding="utf-8")
    rel = str(path.relative_to(ROOT.parents[1]))
    return [
        name
        for name, allowed in RETIRED.items()
        if re.search(rf"(?<!\w){re.escape(name)}\b", text) and rel not in allowed
    ]


def test_no_retired_name_is_used_in_the_code_or_the_docs() -> None:
    files = [p for p in ROOT.rglob("*.py") if "migrations" not in p.parts]
    files += [p for p in DOCS.rglob("*.md") if p.name != "glossary.md"] + [ROOT.parents[1] / "README.md"]
    found = {str(p.relative_to(ROOT.parents[1])): names for p in files if (names := _retired_in(p))}
    assert found == {}


def test_the_retired_check_sees_a_retired_name(tmp_path: Path) -> None:
    probe = ROOT / "__probe_retired__.py"
    probe.write_text("x = CorrectionMemoryWriter  # and preloaded_context_model\n")
    try:
        assert _retired_in(probe) == ["preloaded_context_model", "CorrectionMemoryWriter"]
    finally:
        probe.unlink()


def test_no_face_offers_a_name_that_is_also_one_of_its_modules() -> None:
    """Importing the module sets the package's attribute to it: `from namesake.P import x` would then get the module."""
    clashes = {
        package.name: shared
        for package in ROOT.iterdir()
        if (package / "__init__.py").is_file()
        and (shared := _exported(package.name) & {p.stem for p in package.iterdir()})
    }
    assert clashes == {}


def test_the_services_object_only_wires() -> None:
    """Each use case is a service of its own package; `Services` holds them and has no method of its own."""
    tree = ast.parse((ROOT / "app" / "services.py").read_text(encoding="utf-8"))
    services = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Services")
    assert [n.name for n in services.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)] == []
