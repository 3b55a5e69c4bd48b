"""README.md, the user guide (docs/guide/) and every other page of docs/ and benchmarks/: each
relative link reaches a file, and a link to a heading (``page.md#heading``) a heading of that
page; README stays short and links every page of the guide and the reference."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "benchmarks").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def broken(page: Path, root: Path = ROOT) -> list[str]:
    out = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:: not checked here
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{page.relative_to(root)}: {target} (no such file)")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            out.append(f"{page.relative_to(root)}: {target} (no such heading)")
    return out


def test_every_link_reaches_a_file_and_heading():
    problems = [p for page in PAGES for p in broken(page)]
    assert not problems, "\n".join(problems)


def test_a_broken_link_is_caught(tmp_path):
    (tmp_path / "there.md").write_text("# A heading: with punctuation\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md#a-heading-with-punctuation) [gone](missing.md) "
                    "[bad](there.md#nowhere)\n```\n[in code](ignored.md)\n```\n")
    assert broken(page, tmp_path) == ["page.md: missing.md (no such file)",
                                      "page.md: there.md#nowhere (no such heading)"]


def test_readme_is_short_and_links_every_guide_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(ROOT / "README.md")}
    for page in (ROOT / "docs" / "guide").glob("*.md"):
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(ROOT)}"
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(ROOT)}"
