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
