"""`opgen.template` against upstream torchgen's `CodeTemplate`, live.

Every template torchgen ships (the ATen and autograd template files, and the
`CodeTemplate("...")` literals in torchgen's own modules, found with `ast`) is
rendered by both with several kinds of values, and must come out identical.
Hypothesis then does the same for random templates and values built from the
characters the rules care about.

The values come from `AnyName`, a mapping that has a value for every name, so
neither side's idea of which names a template uses can hide a difference.
"""

from __future__ import annotations

import ast
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opgen.template import Template, TemplateKeyError, _render_ascii_block

code_template = pytest.importorskip("torchgen.code_template")
CodeTemplate = code_template.CodeTemplate


class AnyName(Mapping[str, object]):
    """A value for every name: `named[name]` if there is one, else `default(name)`."""

    def __init__(self, default: Callable[[str], object], named: Mapping[str, object]) -> None:
        self.default = default
        self.named = named

    def __getitem__(self, name: str) -> object:
        return self.named[name] if name in self.named else self.default(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.named)

    def __len__(self) -> int:
        return len(self.named)


# Values that exercise every rule: indentation inside elements, trailing
# whitespace, blank lines (leading, inner, trailing), empty and newline-only
# elements, and non-string elements.
ELEMENTS = [
    "int x = 0;",
    "if (c) {\n  f();  \n}\n",
    "",
    "\n",
    "\n\n  // leading blank lines\nx;\n\n\n",
    "   \t",
    "return y;\t",
]
VALUE_KINDS: dict[str, Callable[[str], object]] = {
    "empty_list": lambda name: [],
    "one_element": lambda name: [f"{name}_value"],
    "three_multi_line": lambda name: [f"{name}:\n  a;\n", ELEMENTS[1], ELEMENTS[4]],
    "every_element": lambda name: list(ELEMENTS),
    "non_strings": lambda name: [1, None, 2.5],
    "string": lambda name: f"{name}_value",
    "multi_line_string": lambda name: f"{name} {{\n  body;  \n\n}}\n",
    "int": lambda name: len(name),
}
UNMIXED = list(VALUE_KINDS.values())
VALUE_KINDS["mixed"] = lambda name: UNMIXED[zlib.crc32(name.encode()) % len(UNMIXED)](name)


def torchgen_templates(torchgen_dir: Path) -> dict[str, str]:
    """Every template torchgen ships, by a readable id: files, then literals in its source."""
    found: dict[str, str] = {}
    for family in ("ATen", "autograd"):
        for path in sorted((torchgen_dir / "packaged" / family / "templates").iterdir()):
            found[f"{family}/{path.name}"] = path.read_text(encoding="utf-8")
    for source in sorted(torchgen_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "CodeTemplate"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                rel = source.relative_to(torchgen_dir)
                found[f"{rel}:{node.lineno}"] = node.args[0].value
    return found


@pytest.fixture(scope="module")
def templates(torchgen_native_dir: Path) -> dict[str, str]:
    return torchgen_templates(torchgen_native_dir.parents[2])


def test_every_torchgen_template_is_found(templates: dict[str, str]) -> None:
    aten = [k for k in templates if k.startswith("ATen/")]
    literals = [k for k in templates if ".py:" in k]
    assert len(aten) >= 40 and len(literals) >= 100


@pytest.mark.parametrize("kind", list(VALUE_KINDS))
def test_every_torchgen_template(templates: dict[str, str], kind: str) -> None:
    env = AnyName(VALUE_KINDS[kind], {})
    mismatches = [
        name
        for name, text in templates.items()
        if Template(text, name).substitute(env) != CodeTemplate(text, name).substitute(env)
    ]
    assert mismatches == []


def test_torchgen_template_files_read_alike(torchgen_native_dir: Path) -> None:
    env = AnyName(VALUE_KINDS["mixed"], {})
    for path in sorted((torchgen_native_dir.parent / "templates").iterdir()):
        ours = Template.from_file(path).substitute(env)
        assert ours == CodeTemplate.from_file(str(path)).substitute(env), path.name


# Random templates and values.

# Whitespace of every kind (line-breaking or not, ASCII or not), the syntax
# characters, word characters including a decimal digit and a non-decimal one.
CHARS = " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000${},;ab_1²é"
FRAGMENTS = [
    "$a", "$b", "$ab", "${a}", "${,a}", "${a,}", "${,b,}", "$$a", "${", "}", "${1}",
    "$é", "$²", "\n", "\r\n", "  ", "\t", "\n  $a\n", "\n\t${,b}\n", "\n$ab;\n",
]  # fmt: skip
NAMES = ["a", "b", "ab", "é", "²"]

template_texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(CHARS, max_size=4)).map("".join)
texts = st.text(CHARS, max_size=12) | st.sampled_from(ELEMENTS)
scalars = texts | st.integers() | st.none()
values = scalars | st.lists(scalars, max_size=5) | st.tuples(scalars, scalars)


@settings(max_examples=1000, deadline=None)
@given(template_texts, st.dictionaries(st.sampled_from(NAMES), values), values)
def test_random_templates(text: str, named: dict[str, object], default: object) -> None:
    env = AnyName(lambda name: default, named)
    assert Template(text).substitute(env) == CodeTemplate(text).substitute(env)


@settings(max_examples=300, deadline=None)
@given(
    template_texts,
    st.dictionaries(st.sampled_from(NAMES), values),
    st.dictionaries(st.sampled_from(NAMES), values),
)
def test_random_keyword_values_and_missing_names(
    text: str, env: dict[str, object], kwargs: dict[str, object]
) -> None:
    try:
        expected = CodeTemplate(text).substitute(env, **kwargs)
    except KeyError as e:
        with pytest.raises(TemplateKeyError) as info:
            Template(text).substitute(env, **kwargs)
        assert info.value.name == e.args[0]
    else:
        assert Template(text).substitute(env, **kwargs) == expected


# Block values that `substitute` renders by whole-text operations rather than line by
# line: lists of `str` that are ASCII with "\n" as their only line break. They are
# generated with what that path treats specially (empty and "\n"-only elements, final
# "\n"s, blank lines, trailing spaces, tabs and "\x1f" before "\n" or at the end), and
# mixed with near misses that must take the line-by-line path: the other line breaks
# (CRLF, form feed, ...), non-ASCII whitespace, non-`str` elements, a `str` subclass
# with its own `__str__`, and indents that are not plain spaces and tabs.


class Shouting(str):
    def __str__(self) -> str:
        return self.upper()


LINE_PIECES = [
    "", "\n", "\n\n", "  ", "\t", " \n", "\t\n", "\x1f\n", "  \t \n", "\n   \n\n",
    "int f();", "if (c) {\n  g();  \n}\n", "x \t", "\n\n  y\n\n\n",
]  # fmt: skip
NEAR_MISSES = ["\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\xa0", "é"]
FAST_INDENTS = ["", " ", "  ", "    ", "\t", " \t"]
OTHER_INDENTS = ["\x0c ", "\xa0", "\u3000 ", " \x85", "\x1f"]

fast_texts = st.lists(st.sampled_from(LINE_PIECES) | st.text(" \t\x1f\nab;", max_size=6)).map(
    "".join
)
fast_lists = st.lists(fast_texts, max_size=10)
near_miss_elements = (
    st.builds(
        "{}{}{}{}".format,
        fast_texts,
        st.sampled_from(NEAR_MISSES),
        st.sampled_from(["", "b", " ", "\n"]),
        fast_texts,
    )
    | st.integers()
    | st.none()
    | fast_texts.map(Shouting)
)
block_values = (
    fast_lists
    | st.lists(fast_texts | near_miss_elements, max_size=10)
    | fast_texts
    | near_miss_elements
)
block_templates = st.builds(
    "head {{\n{}$v{}\n}}\n".format,
    st.sampled_from(FAST_INDENTS + OTHER_INDENTS),
    st.sampled_from(["", ";", "  ", " // $v", "\n$v"]),
)


@settings(max_examples=1500, deadline=None)
@given(block_templates, block_values)
def test_random_block_values(text: str, value: object) -> None:
    assert Template(text).substitute(v=value) == CodeTemplate(text).substitute(v=value)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(FAST_INDENTS), fast_lists)
def test_whole_text_path_takes_plain_ascii_lists(indent: str, value: list[str]) -> None:
    # Not just the same output: the whole-text path itself produces it.
    text = f"{indent}$v\n"
    expected = CodeTemplate(text).substitute(v=value)
    assert _render_ascii_block(indent, value) == expected.removesuffix("\n")
