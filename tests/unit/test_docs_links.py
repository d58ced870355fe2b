"""The documentation holds together: every relative link and anchor resolves, and the
README stays a front page.

The pages are the README, everything under `docs/` and `benchmarks/README.md`. A link is
relative when it names no scheme (`https:`, `mailto:`); it must name a path that exists,
relative to the page that holds it, and its `#anchor`, if any, must be the slug of a
heading of the page it points to, by GitHub's rules (`heading_slugs`). Links inside code
(fenced blocks, inline code) are text, not links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted([README, ROOT / "benchmarks" / "README.md", *(ROOT / "docs").rglob("*.md")])

README_MAX_LINES = 200

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The page's lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the rendered text lowercased, every character
    but letters, digits, `-`, `_` and spaces dropped, spaces turned into `-`."""
    text = _INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text)  # and HTML tags show nothing
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def heading_slugs(page: Path) -> set[str]:
    """Every anchor a page's headings define; a repeated slug gets `-1`, `-2`, ..."""
    seen: dict[str, int] = {}
    slugs = set()
    for _, line in prose_lines(page.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        slugs.add(base if count == 0 else f"{base}-{count}")
    return slugs


def relative_links(page: Path) -> Iterator[tuple[int, str]]:
    """The relative link targets of a page, with their line numbers."""
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        for match in _LINK.finditer(_INLINE_CODE.sub("code", line)):
            target = match.group(1)
            if target and not _SCHEME.match(target):
                yield number, target


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_slugs_follow_githubs_rules() -> None:
    assert slug("Quick start") == "quick-start"
    assert slug("`opgen check`") == "opgen-check"
    assert slug("`--derivatives`: PyTorch's `derivatives.yaml`") == (
        "--derivatives-pytorchs-derivativesyaml"
    )
    assert slug("Layout (suggested; keep the idea, improve the details)") == (
        "layout-suggested-keep-the-idea-improve-the-details"
    )
    assert slug("Decision 9: frozen classes, the GC and the exit") == (
        "decision-9-frozen-classes-the-gc-and-the-exit"
    )
    assert slug("See [the map](map.md) for_each") == "see-the-map-for_each"


def test_repeated_headings_get_numbered_anchors(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n## Notes\n```\n## not a heading\n```\n## Notes\n")
    assert heading_slugs(page) == {"title", "notes", "notes-1"}


def test_links_in_code_are_not_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[a](a.md) and `[b](b.md)`, [`c`](c.md#x), [web](https://example.com)\n"
        "```\n[d](d.md)\n```\n"
    )
    assert list(relative_links(page)) == [(1, "a.md"), (1, "c.md#x")]


def test_the_pages_include_the_readme_the_docs_and_the_benchmarks() -> None:
    names = {_name(page) for page in PAGES}
    assert {"README.md", "benchmarks/README.md", "docs/DESIGN.md"} <= names
    assert any(name.startswith("docs/commands/") for name in names)


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_names_an_existing_path_and_heading(page: Path) -> None:
    broken = []
    for number, target in relative_links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{_name(page)}:{number}: {target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in heading_slugs(destination):
            broken.append(f"{_name(page)}:{number}: {target}: no heading '#{anchor}'")
    assert not broken, "\n".join(broken)


def test_the_readme_is_a_front_page_of_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


def test_quick_start_is_one_sh_block_of_exactly_two_commands() -> None:
    # CI runs these two commands as the README gives them.
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Quick start")
    opening = next(i for i in range(start + 1, len(lines)) if _FENCE.match(lines[i]))
    assert lines[opening].strip() == "```sh"
    closing = next(i for i in range(opening + 1, len(lines)) if _FENCE.match(lines[i]))
    commands = [line for line in lines[opening + 1 : closing] if line.strip()]
    assert len(commands) == 2
    assert not any(line.rstrip().endswith("\\") for line in commands)
