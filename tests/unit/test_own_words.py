"""opgen says things in its own words: no run of lines is torchgen's text.

The measure. A line is normalised by stripping it and making each run of
whitespace one space; a normalised line is dropped when it is shorter than
12 characters or made only of `#/*{}()[],;:` and spaces. Every 6 consecutive
kept lines form a window, spanning the file lines of its first and last kept
line. A window of a project file is *shared* when the same 6 normalised lines
are a window of one of torchgen's `.py .h .cpp .cu .yaml .in .ini` files (the
installed package, located with `importlib.util.find_spec`, never imported).

The one exception: C++ that opgen must emit exactly as torchgen does. A shared
window of a Python file is allowed when it lies within the line span of a
single string literal (an `ast.Constant` holding a str, or an `ast.JoinedStr`)
that is *marked*: the line directly above the literal's first line, or directly
above the first line of the innermost statement that contains the literal, is
a comment starting with `MARKER`. Every other shared window is a finding:
- in `src/opgen`, `.py` and `.in` files may share only marked literals;
- `tests/` (apart from the conformance tests' data), `docs/` and `README.md`
  may share nothing.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

MARKER = "# Emitted C++ as torchgen writes it (byte-identical output)."

WINDOW = 6
SHORTEST_LINE = 12
_PUNCTUATION_ONLY = frozenset("#/*{}()[],;: ")
REFERENCE_SUFFIXES = (".py", ".h", ".cpp", ".cu", ".yaml", ".in", ".ini")

ROOT = Path(__file__).resolve().parents[2]

Span = tuple[int, int]  # first and last file line (1-based) of a window


def windows(text: str) -> Iterator[tuple[int, Span]]:
    """Every window of `text`: the hash of its normalised lines, and its span."""
    kept: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        normalised = " ".join(line.split())
        if len(normalised) >= SHORTEST_LINE and not set(normalised) <= _PUNCTUATION_ONLY:
            kept.append((number, normalised))
    for i in range(len(kept) - WINDOW + 1):
        run = kept[i : i + WINDOW]
        yield hash("\n".join(line for _, line in run)), (run[0][0], run[-1][0])


def reference_hashes(texts: Iterable[str]) -> frozenset[int]:
    return frozenset(h for text in texts for h, _ in windows(text))


def shared_spans(text: str, reference: frozenset[int]) -> list[Span]:
    return [span for h, span in windows(text) if h in reference]


def marked_literal_spans(source: str) -> list[Span]:
    """The line spans of the string literals that carry the marker (see the module docstring)."""
    lines = source.splitlines()

    def marked(line: int) -> bool:
        return line >= 2 and lines[line - 2].strip().startswith(MARKER)

    spans: list[Span] = []

    def visit(node: ast.AST, statement_line: int) -> None:
        if isinstance(node, ast.stmt):
            statement_line = node.lineno
        is_literal = isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
        if is_literal and (marked(node.lineno) or marked(statement_line)):
            assert isinstance(node, ast.expr) and node.end_lineno is not None
            spans.append((node.lineno, node.end_lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, statement_line)

    visit(ast.parse(source), 0)
    return spans


def unmarked_spans(text: str, reference: frozenset[int]) -> list[Span]:
    """The shared windows of Python source `text` that no marked literal holds."""
    shared = shared_spans(text, reference)
    if not shared:
        return shared
    literals = marked_literal_spans(text)
    return [
        (first, last)
        for first, last in shared
        if not any(start <= first and last <= end for start, end in literals)
    ]


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def findings(files: Iterable[Path], reference: frozenset[int], *, allow_marked: bool) -> list[str]:
    """`path:first-last` for each run of shared windows (outside marked literals, if allowed)."""
    found: list[str] = []
    for path in sorted(files):
        text = path.read_text(errors="replace")
        if allow_marked and path.suffix == ".py":
            spans = unmarked_spans(text, reference)
        else:
            spans = shared_spans(text, reference)
        relative = path.relative_to(ROOT).as_posix()
        found += [f"{relative}:{first}-{last}" for first, last in _merged(spans)]
    return found


def _files_under(top: Path, suffixes: tuple[str, ...] | None = None) -> Iterator[Path]:
    for directory, subdirectories, names in os.walk(top):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        for name in names:
            if suffixes is None or name.endswith(suffixes):
                yield Path(directory, name)


@pytest.fixture(scope="module")
def torchgen_windows() -> frozenset[int]:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        pytest.skip("torchgen is not installed")
    package = Path(spec.origin).parent
    files = _files_under(package, REFERENCE_SUFFIXES)
    return reference_hashes(path.read_text(errors="replace") for path in files)


def test_src_shares_only_marked_cpp_with_torchgen(torchgen_windows: frozenset[int]) -> None:
    files = _files_under(ROOT / "src" / "opgen", (".py", ".in"))
    found = findings(files, torchgen_windows, allow_marked=True)
    assert not found, "text shared with torchgen outside marked C++ literals:\n" + "\n".join(found)


def test_tests_and_docs_share_nothing_with_torchgen(torchgen_windows: frozenset[int]) -> None:
    data = ROOT / "tests" / "conformance" / "data"
    files = [p for p in _files_under(ROOT / "tests") if data not in p.parents]
    files += [*_files_under(ROOT / "docs"), ROOT / "README.md"]
    found = findings((p for p in files if p.exists()), torchgen_windows, allow_marked=False)
    assert not found, "text shared with torchgen:\n" + "\n".join(found)


# -- the check itself, on small files against a made-up reference -----------------------

PYTHON_REFERENCE = """\
def count_widgets(registry: WidgetRegistry) -> int:
    total_widgets = 0
    for widget_name in registry.names():
        if registry.is_enabled(widget_name):
            total_widgets += registry.weight_of(widget_name)
    return total_widgets
"""

CPP_REFERENCE = """\
void reset_widgets(WidgetTable &table) {
  for (auto &widget : table.entries()) {
    widget.weight_reset_to(0);
    widget.enabled_set_to(false);
  }
  table.generation_bump();
  table.listeners_notify();
}
"""

REFERENCE = reference_hashes([PYTHON_REFERENCE, CPP_REFERENCE])


def test_a_copied_python_function_is_found() -> None:
    source = f"import os\n\n\n{PYTHON_REFERENCE}"
    assert unmarked_spans(source, REFERENCE) == [(4, 9)]


def test_a_copied_literal_without_the_marker_is_found() -> None:
    source = f'# Resets the widgets.\nRESET = """\n{CPP_REFERENCE}"""\n'
    assert unmarked_spans(source, REFERENCE) == [(3, 9)]
    # The marker must be on the line right above, not further up.
    assert unmarked_spans(f'{MARKER}\n\nRESET = """\n{CPP_REFERENCE}"""\n', REFERENCE)


def test_a_marked_literal_passes() -> None:
    above_literal = f'RESET = (\n    {MARKER}\n    """\n{CPP_REFERENCE}"""\n)\n'
    above_statement = f'{MARKER} The reset.\nRESET = Template(\n    """\n{CPP_REFERENCE}"""\n)\n'
    for source in (above_literal, above_statement):
        assert shared_spans(source, REFERENCE)
        assert unmarked_spans(source, REFERENCE) == []
