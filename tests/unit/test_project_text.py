"""The project's text says what is, never how it came to be.

The prose read: README.md, docs/**/*.md, benchmarks/README.md and examples/**/*.md
(outside fenced code blocks and `code spans`), and the docstrings and comments of the
Python files under src/, tests/, benchmarks/ and examples/ (string values that are not
docstrings are data, such as emitted C++, and are not read). A line of it fails when it
names an issue or a pull request, a work session (pytest's *test session* is another
sense), a measurement as re-done or as before or after a change, a version as previous,
or, in the Markdown, a date: what changed when belongs to the history, and a figure's
conditions are said as conditions ("on a day when the machine ran slowly"), not as dates.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NARRATION: dict[str, re.Pattern[str]] = {
    "names an issue": re.compile(
        r"\bissues?\s*(?:#\s*)?\d+|\b(?:the|this|that)\s+issue\b|\bissue's\b|\(issue\b",
        re.IGNORECASE,
    ),
    "names a pull request": re.compile(r"\bPR\s*#?\d+|\bpull request\b", re.IGNORECASE),
    "names a work session": re.compile(r"(?<!\btest )(?<!\btest-)\bsessions?\b", re.IGNORECASE),
    "tells of a change": re.compile(
        r"\bre-?measured\b|\b(?:session|sitting|version|change|commit) before\b"
        r"|\b(?:before|after) (?:this|that|the last) (?:change|session|sitting|commit)\b"
        r"|\bpreviously\b|\bformerly\b|(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )\bused to\b"
        r"|\b(?:earlier|later) that (?:day|afternoon|morning|evening)\b|\ban hour later\b",
        re.IGNORECASE,
    ),
}
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")

# (file, the words): where a word is used in another sense.
ALLOWED: dict[tuple[str, str], str] = {
    ("src/opgen/targets/pyi/tensor_methods.py", "mypy issue 5704"): "another project's bug",
}

MARKDOWN = ("README.md", "benchmarks/README.md", "docs/**/*.md", "examples/**/*.md")
PYTHON = ("src/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "examples/**/*.py")

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")


def markdown_prose(text: str) -> Iterator[tuple[int, str]]:
    """The lines of `text` outside fenced code, without code spans and link targets."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, _LINK_TARGET.sub("]", _CODE_SPAN.sub("``", line))


def python_prose(text: str) -> Iterator[tuple[int, str]]:
    """The docstrings' and comments' lines of a Python source."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None and node.body:
                first = node.body[0].lineno
                for offset, line in enumerate(docstring.splitlines()):
                    yield first + offset, line
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def project_files(patterns: tuple[str, ...]) -> Iterator[Path]:
    """The files of `patterns`, but this one, which names what it looks for."""
    for pattern in patterns:
        found = ROOT.glob(pattern)
        yield from sorted(p for p in found if ".venv" not in p.parts and p != Path(__file__))


def narration(path: Path) -> Iterator[str]:
    """Each narrating phrase of `path`'s prose: `file:line: what: the line`.

    The prose's lines are joined, stripped, with one space, so that a phrase broken
    over two lines is read whole; it is reported at the line it starts on."""
    relative = path.relative_to(ROOT).as_posix()
    text = path.read_text()
    markdown = path.suffix == ".md"
    lines = sorted(markdown_prose(text) if markdown else python_prose(text))
    starts: list[int] = []
    joined = ""
    for _, line in lines:
        starts.append(len(joined))
        joined += line.strip() + " "
    for words in (words for (file, words) in ALLOWED if file == relative):
        joined = joined.replace(words, " " * len(words))
    patterns = [*NARRATION.items(), *([("gives a date", DATE)] if markdown else [])]
    for what, pattern in patterns:
        for match in pattern.finditer(joined):
            index = bisect.bisect_right(starts, match.start()) - 1
            number, line = lines[index]
            yield f"{relative}:{number}: {what}: {line.strip()}"


def test_prose_is_read_where_it_is() -> None:
    markdown = "a\n```\nissue 3\n```\nsee `issue 4` and [x](issue-5.md), not issue 6\n"
    assert list(markdown_prose(markdown)) == [
        (1, "a"),
        (5, "see `` and [x], not issue 6"),
    ]
    source = '"""Issue 1."""\nx = "issue 2"  # issue 3\n\ndef f() -> None:\n    """A."""\n'
    assert sorted(python_prose(source)) == [(1, "Issue 1."), (2, "# issue 3"), (5, "A.")]


def test_the_patterns_tell_narration_from_other_senses() -> None:
    def told(line: str) -> list[str]:
        return [what for what, pattern in NARRATION.items() if pattern.search(line)]

    assert told("Bound functions (issue 31) bind C++") == ["names an issue"]
    assert told("as the issue allowed for") == ["names an issue"]
    assert told("The session before gave 9.9x") == ["names a work session", "tells of a change"]
    assert told("Re-measured on a slow day") == ["tells of a change"]
    assert told("where it used to print every group") == ["tells of a change"]
    assert told("built once per test session, kept between test sessions") == []
    assert told("a file's test-session fixtures") == []
    assert told("the value is used to pick a kernel; it issues a warning") == []


def test_no_text_narrates_its_history() -> None:
    found = [
        finding
        for path in (*project_files(MARKDOWN), *project_files(PYTHON))
        for finding in sorted(narration(path), key=lambda f: int(f.split(":")[1]))
    ]
    assert not found, "say what is, not how it came to be:\n" + "\n".join(found)


def test_the_allowlist_is_used() -> None:
    for file, words in ALLOWED:
        assert words in (ROOT / file).read_text(), f"{file} no longer says {words!r}"
