"""The pure-Python YAML reader gives exactly what PyYAML's path gives, or stands aside.

`read_subset` (opgen.spec.yaml.subset) reads the block YAML that spec files
use; `read_full` (opgen.spec.yaml.full) is PyYAML's path. For every text:

- either `read_subset` returns None (the text is not in the subset) and
  `parse_yaml` hands it to PyYAML, or it returns the document PyYAML's path
  returns: the same values of the same types, in the same order, and the same
  Location (line, column, length) for the document, every mapping, sequence,
  key, value and item;
- `parse_yaml` raises exactly the errors PyYAML's path raises: the subset
  reader never accepts a text that PyYAML's path rejects.

Torch's own spec files must take the fast path: that is what it is for.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from opgen.diagnostics import SpecError
from opgen.spec.yaml.full import read_full
from opgen.spec.yaml.load import parse_yaml
from opgen.spec.yaml.subset import read_subset
from opgen.spec.yaml.values import YamlDocument, YamlList, YamlMap

PATH = "spec.yaml"
SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same_value(fast: object, full: object, where: str = "root") -> None:
    assert type(fast) is type(full), where
    if isinstance(full, YamlMap):
        assert isinstance(fast, YamlMap)
        assert list(fast) == list(full), where
        assert (fast.path, fast.line, fast.location) == (full.path, full.line, full.location), where
        assert dict(fast.key_locations) == dict(full.key_locations), where
        assert dict(fast.value_locations) == dict(full.value_locations), where
        for key in full:
            assert fast.key_location(key) == full.key_location(key), f"{where}: {key!r}"
            assert fast.value_location(key) == full.value_location(key), f"{where}: {key!r}"
            assert_same_value(fast[key], full[key], f"{where}[{key!r}]")
    elif isinstance(full, YamlList):
        assert isinstance(fast, YamlList)
        assert len(fast) == len(full), where
        assert fast.location == full.location, where
        assert dict(fast.item_locations) == dict(full.item_locations), where
        for i, (a, b) in enumerate(zip(fast, full, strict=True)):
            assert_same_value(a, b, f"{where}[{i}]")
    else:
        assert fast == full or (fast != fast and full != full), where  # .nan is not itself


def assert_same_document(fast: YamlDocument, full: YamlDocument) -> None:
    assert (fast.path, fast.text, fast.location) == (full.path, full.text, full.location)
    assert_same_value(fast.root, full.root)


def outcome(read: object, text: str) -> YamlDocument | SpecError:
    """The document, or the SpecError; any other exception is a bug (a traceback for the user)."""
    assert callable(read)
    try:
        document = read(PATH, text)
    except SpecError as e:
        return e
    assert isinstance(document, YamlDocument)
    return document


def check(text: str) -> YamlDocument | None:
    """Check the two readers against each other on `text`; the fast path's document, if any."""
    full = outcome(read_full, text)
    fast = read_subset(PATH, text)
    if fast is not None:
        assert isinstance(full, YamlDocument), f"read, but PyYAML's path rejects it: {full}"
        assert_same_document(fast, full)
    loaded = outcome(parse_yaml, text)
    if isinstance(full, YamlDocument):
        assert isinstance(loaded, YamlDocument)
        assert_same_document(loaded, full)
    else:
        assert isinstance(loaded, SpecError)
        assert loaded.diagnostics == full.diagnostics
    return fast


# -- torch's spec files ---------------------------------------------------------------


def _torchgen_file(relative: str) -> Path | None:
    spec = importlib.util.find_spec("torchgen")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), "packaged", relative)
    return path if path.is_file() else None


TORCH_FILES = [
    "ATen/native/native_functions.yaml",
    "ATen/native/tags.yaml",
    "autograd/derivatives.yaml",
]


@pytest.mark.parametrize("relative", TORCH_FILES)
def test_torch_spec_files_take_the_fast_path_and_read_the_same(relative: str) -> None:
    path = _torchgen_file(relative)
    if path is None:
        pytest.skip(f"torchgen's packaged {relative} is not installed")
    text = path.read_text(encoding="utf-8")
    fast = read_subset(str(path), text)
    assert fast is not None, f"{relative} is outside the subset"
    assert_same_document(fast, read_full(str(path), text))


# -- exact examples -------------------------------------------------------------------

IN_SUBSET = {
    "entries": """
        # a comment
        - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor  # why
          variants: function, method
          dispatch:
            CPU, CUDA: add_out
            SparseCPU: add_sparse
          tags: [core, pointwise]
          cpp_no_default_args: ['dim', "keepdim"]
          structured: True
          device_check: NoCheck   # TensorIterator

        - func: x(Tensor[] x) -> Tensor[]
          dispatch: {}
          autogen: []
        """,
    "literal blocks": """
        - tag: a
          desc: |
                  first line
                    indented

                  last
        - tag: b
          desc: |-
            stripped
        - tag: c
          desc: |+
            kept

        """,
    "quoted over lines": """
        - name: f(Tensor self) -> Tensor
          self: "g(grad,
                  self)"
          other: 'it''s
                   folded

                 twice'
        """,
    "types": """
        a: yes
        b: Off
        c: ~
        d: null
        e:
        f: -12
        g: 0
        h: [True, no, 7]
        True: 1
        ~: y
        """,
    "nested and indentless": """
        a:
        - x
        -   k: 1
            l: 2
        -
          - y
        b:
            c:
              - z
        """,
    "non-ASCII and CRLF": "- key: caf\u00e9 \u2192 \U0001f600\r\n  other: '\u00e9'\r\n",
    "no final line break": "a: b",
    "only comments": "# nothing\n\n   # here\n",
    "empty": "",
}


@pytest.mark.parametrize("text", IN_SUBSET.values(), ids=list(IN_SUBSET))
def test_in_subset(text: str) -> None:
    assert check(textwrap.dedent(text)) is not None


OUTSIDE = {
    "a float": "a: 1.5",
    "an octal int": "a: 010",
    "a timestamp": "a: 2001-12-14",
    "a merge key": "a: &x {b: 1}\nc:\n  <<: *x",
    "an anchor": "a: &x 1",
    "an alias": "a: *x",
    "a tag": "a: !!str 1",
    "a flow mapping": "a: {b: 1}",
    "a nested flow sequence": "a: [[b]]",
    "a flow sequence over lines": "a: [b,\n  c]",
    "a trailing comma": "a: [b,]",
    "a colon in a flow item": "a: [b:c]",
    "a folded scalar": "a: >\n  b\n",
    "an indentation indicator": "a: |2\n   b\n",
    "a plain scalar over lines": "a: b\n  c\n",
    "a backslash escape": 'a: "b\\tc"',
    "a duplicate key": "a: 1\na: 2\n",
    "a key that repeats as a boolean": "yes: 1\nTrue: 2\n",
    "a complex key": "? a\n: b\n",
    "a quoted key": "'a': b\n",
    "a tab": "a:\tb\n",
    "a document marker": "---\na: b\n",
    "a directive": "%YAML 1.1\n---\na: b\n",
    "a mapping in a value": "a: b: c\n",
    "a root scalar": "just text\n",
    "an indented root": "  a: b\n",
    "a scalar on its own line": "a:\n  b\n",
    "a compact nested sequence": "- - a\n",
    "an unclosed quote": "a: 'b\n",
    "a lone CR": "a: b\rc: d\n",
    "a literal block at the end without a line break": "a: |\n  b",
    "a comment right after a quote": 'a: "b"#c\n',
    "a key of 1,001 characters": "k" * 1001 + ": v\n",
}


@pytest.mark.parametrize("text", OUTSIDE.values(), ids=list(OUTSIDE))
def test_outside_subset(text: str) -> None:
    assert check(text) is None


def test_duplicate_keys_keep_pyyamls_message() -> None:
    with pytest.raises(SpecError) as error:
        parse_yaml(PATH, "- func: f() -> ()\n  func: g() -> ()\n")
    assert str(error.value) == "spec.yaml:2:3: error: duplicate key 'func' (first given on line 1)"


# -- generated documents --------------------------------------------------------------
#
# `documents()` writes block YAML the way spec files are written, from a random
# tree: mappings and sequences nested with varied indentation, scalars drawn
# from words that YAML reads as other types and from characters that mean
# something in YAML, quoted and literal scalars, flow sequences, comments and
# blank lines. `near_misses()` then breaks a generated document by inserting,
# deleting or repeating text, so that both sides of the subset's boundary, and
# broken YAML, are common.

WORDS = [
    "yes", "Yes", "YES", "no", "NO", "true", "True", "TRUE", "false", "False", "on", "On",
    "ON", "off", "Off", "oFF", "y", "n", "Y", "null", "Null", "NULL", "nULL", "~", "0", "7",
    "-3", "+4", "-0", "00", "012", "0x1F", "0b101", "1_000", "1.5", "-.5", ".inf", "-.INF",
    ".nan", "1e3", "1.0e+3", "1:30", "190:20:30.15", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "<<", "=", "==", "<", "-", "-x", "--", "?x", ":x", "x:", "a:b", "a::b", "a #b", "a#b",
    "Tensor[] x", "int[2] y=[0,1]", "func", "add.Tensor(Tensor self, *, Scalar alpha=1) -> Tensor",
    "(Tensor(a!) self) -> Tensor(a!)", "CPU, CUDA", "at::native::f", "{x}", "[x]", "!x", "&x",
    "*x", "%x", "@x", "`x", "|x", ">x", ",x", "]x", "a'b", 'a"b', "a\\b", "caf\u00e9",
    "\u20ac", "\U0001f600", "a  b", "x ", "\u00a0x", "\u3000",
]  # fmt: skip
CHARS = "ab_ .,:#-?[]{}()*&!|>'\"%@`=~<+019yYnNoOtTfF\\\u00e9\u2192 "

plain_texts = st.sampled_from(WORDS) | st.text(alphabet=CHARS, min_size=1, max_size=8)
keys = st.sampled_from(["func", "dispatch", "tags", "a", "b", "CPU, CUDA"]) | plain_texts
comments = st.sampled_from(["", "", "", " # c", "  #x: y", " #", "# no space"])


def single_quoted(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def double_quoted(s: str) -> str:
    return '"' + s.replace('"', "") + '"'


quoted_texts = st.text(alphabet=CHARS, max_size=8)
quoted = st.builds(single_quoted, quoted_texts) | st.builds(double_quoted, quoted_texts)
flow_items = plain_texts.filter(lambda s: "\n" not in s) | quoted
flow_sequences = st.lists(flow_items, max_size=4).map(
    lambda items: "[" + ", ".join(items) + "]"
) | st.sampled_from(["[]", "[ ]", "{}", "{ }", "[a,b]", "[ a , 'b' ]"])
inline_values = plain_texts | quoted | flow_sequences


@st.composite
def multiline_quoted(draw: st.DrawFn, indent: int) -> list[str]:
    parts = draw(st.lists(st.text(alphabet="ab '#:-", max_size=5), min_size=2, max_size=4))
    pad = " " * draw(st.integers(0, indent + 3))
    quote = draw(st.sampled_from(["'", '"']))
    body = [parts[0]] + [pad + p for p in parts[1:]]
    if quote == "'":
        body = [p.replace("'", "''") for p in body]
    else:
        body = [p.replace('"', "") for p in body]
    body[0] = quote + body[0]
    body[-1] += quote
    return body


@st.composite
def literal(draw: st.DrawFn, indent: int) -> list[str]:
    header = draw(st.sampled_from(["|", "|", "|-", "|+", "|  # c", "|2", ">"]))
    pad = " " * (indent + draw(st.integers(0, 3)))
    lines = draw(
        st.lists(
            st.sampled_from(["x", "  y", "# z", "", " ", "a: b", "- c"]), min_size=1, max_size=4
        )
    )
    return [header] + [pad + line if line.strip() else line for line in lines]


@st.composite
def node_lines(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    """A block mapping or sequence whose lines start at column `indent`."""
    pad = " " * indent
    is_sequence = draw(st.booleans())
    lines: list[str] = []
    for key in draw(st.lists(keys, min_size=1, max_size=4)):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", " " * draw(st.integers(0, 6)), "# comment"])))
        head = pad + ("-" + " " * draw(st.integers(1, 3)) if is_sequence else "")
        as_mapping = not is_sequence or draw(st.booleans())
        if as_mapping:
            head += key + draw(st.sampled_from([":", ":", " :"]))
        column = len(head) - len(key) - 1 if as_mapping else indent
        choice = draw(st.integers(0, 9))
        if choice <= 4 or depth >= 3:
            value = draw(inline_values)
            separator = " " if as_mapping else ""
            lines.append(head + separator + value + draw(comments))
        elif choice == 5:
            lines.append(head + draw(comments))  # empty (null), or a nested block below
            if draw(st.booleans()):
                step = draw(st.integers(-1, 3)) if as_mapping else draw(st.integers(1, 3))
                lines += draw(node_lines(max(column + step, 0), depth + 1))
        elif choice == 6:
            block = draw(literal(column + 1))
            lines.append(head + " " + block[0])
            lines += block[1:]
        elif choice == 7:
            block = draw(multiline_quoted(column))
            lines.append(head + " " + block[0])
            lines += block[1:]
        elif as_mapping and not is_sequence:
            lines.append(head)
            lines += draw(node_lines(column + draw(st.integers(1, 3)), depth + 1))
        else:
            lines.append(head + " " + draw(inline_values))
    return lines


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(node_lines(0, 0))
    if draw(st.booleans()):
        lines.insert(0, "# header")
    end = draw(st.sampled_from(["\n", "\n", "", "\n\n", "\n# end"]))
    text = "\n".join(lines) + end
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("\n", "\r\n")
    return text


EDIT_CHARS = list("\t\r\n :#-'\"[]{}|>&*!%?,~ ")


@st.composite
def near_misses(draw: st.DrawFn) -> str:
    text = draw(documents())
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "repeat"]))
        if edit == "insert":
            text = text[:at] + draw(st.sampled_from(EDIT_CHARS)) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start : line_end if line_end >= 0 else len(text)]
            text = text[:line_start] + line + "\n" + text[line_start:]
    return text


@SETTINGS
@given(documents())
@example("- a: b\n  c: d\n")
@example("a:\n- b\n- c: d\n  e: f\n")
def test_generated_documents(text: str) -> None:
    event("fast path" if check(text) is not None else "PyYAML")


@SETTINGS
@given(near_misses())
def test_near_misses(text: str) -> None:
    event("fast path" if check(text) is not None else "PyYAML")
