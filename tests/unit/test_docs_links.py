"""README and docs/ point at what is there: every relative link's file, and its heading when it names one (on the
same page too)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _broken(page: Path) -> list[str]:
    found = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        to = (page.parent / path).resolve() if path else page
        if not to.exists():
            found.append(f"{target}: no such file")
        elif anchor and to.suffix == ".md":
            headings = {_anchor(h) for h in re.findall(r"^#+ (.+)$", to.read_text(encoding="utf-8"), re.M)}
            if anchor not in headings:
                found.append(f"{target}: no such heading")
    return found


def test_every_link_of_the_readme_and_the_docs_leads_somewhere() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = {str(p.relative_to(ROOT)): b for p in pages if (b := _broken(p))}
    assert broken == {}


def test_the_project_file_names_modules_that_exist() -> None:
    comments = [line.partition("#")[2] for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines()]
    named = [n for c in comments for n in re.findall(r"[\w/]+\.py\b", c)]
    missing = [n for n in named if not any(ROOT.glob(f"**/{n}"))]
    assert missing == []


# A page read in one sitting: a guide or a benchmark run over this is split (a run per dated file).
PAGE_LIMIT = 15_000


def test_every_guide_and_benchmark_page_is_read_in_one_sitting() -> None:
    long = {p.name: n for p in (ROOT / "docs").rglob("*.md") if (n := len(p.read_text(encoding="utf-8"))) > PAGE_LIMIT}
    assert long == {}


# A file name in backticks is a file of the repository, but for these: made at run time, or the shared yardsticks.
NOT_IN_THE_REPOSITORY = {
    "names.js": "written by the server from the code's own names",
    "serve.json": "written in the data folder by a running server",
    "namesake-collection.json": "the embedded vector store's own file",
    "edge_config.json": "the embedded vector store's own file",
    "fold-K.memory.json": "a fold's policy, fitted by the bench into bench/out",
    "baseline.py": "the shared yardstick, beside the repository",
    "loop_check.py": "the shared yardstick, beside the repository",
}
FILE_NAME = re.compile(r"`([\w./-]*\w\.(?:py|js|css|html|json|toml|yml|yaml))(?::[^`]*)?`")


def _missing_files(page: Path, present: list[str]) -> list[str]:
    named = FILE_NAME.findall(page.read_text(encoding="utf-8"))
    return [
        n
        for n in named
        if n.rsplit("/", 1)[-1] not in NOT_IN_THE_REPOSITORY and not any(p == n or p.endswith(f"/{n}") for p in present)
    ]


def test_every_file_the_readme_and_the_docs_name_is_there() -> None:
    """A module moved or renamed leaves no page pointing at its old place (the glossary names retired ones)."""
    skip = {".git", ".venv", "node_modules", "__pycache__"}
    present = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    missing = {
        str(p.relative_to(ROOT)): m for p in pages if p.name != "glossary.md" and (m := _missing_files(p, present))
    }
    assert missing == {}


def test_the_file_check_sees_a_moved_module(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("The spotter is `reliability/spot.py`; it was `reliability/candidates.py`; `names.js` is made.")
    assert _missing_files(page, ["src/namesake/reliability/spot.py"]) == ["reliability/candidates.py"]
