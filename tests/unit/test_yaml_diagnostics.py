"""A YAML syntax error points at the offending character, in plain words.

Every spec file opgen reads goes through one YAML reader, so these hold for
native_functions.yaml, library specs, derivatives, backend, ExecuTorch, MLX
and lowering YAMLs alike. The error is at the character that is wrong (not
where the entry that holds it starts), a note follows at the start of the
mapping or list when that is on another line, tabs are named as tabs, and
common mistakes (an over-indented key, an entry without its '- ') get a hint.
Each case is the document and the exact diagnostics, rendered with the source
line and caret as `opgen` prints them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opgen.cli import main
from opgen.diagnostics import SpecError, render
from opgen.spec.yaml.load import parse_yaml

PATH = "spec.yaml"


def diagnose(text: str) -> list[str]:
    """The lines of the diagnostics of reading `text`, rendered as opgen prints them."""
    with pytest.raises(SpecError) as raised:
        parse_yaml(PATH, text)
    sources = {PATH: text.splitlines()}
    return [line for d in raised.value.diagnostics for line in render(d, sources).split("\n")]


# -- indentation -----------------------------------------------------------------------


def test_a_key_indented_more_than_the_keys_before_it_after_a_value() -> None:
    text = "- func: foo(Tensor self) -> Tensor\n  variants: function\n   python_module: nn\n"
    assert diagnose(text) == [
        "spec.yaml:3:4: error: invalid YAML: the key 'python_module' is indented more than the "
        "keys before it",
        "     python_module: nn",
        "     ^~~~~~~~~~~~~",
        "spec.yaml:1:1: note: the entry starts here",
        "  - func: foo(Tensor self) -> Tensor",
        "  ^",
    ]


def test_an_over_indented_key_in_a_dispatch_table() -> None:
    text = (
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_cpu\n     CUDA: foo_cuda\n"
    )
    assert diagnose(text) == [
        "spec.yaml:4:6: error: invalid YAML: the key 'CUDA' is indented more than the keys "
        "before it",
        "       CUDA: foo_cuda",
        "       ^~~~",
        "spec.yaml:3:5: note: the mapping that holds it starts here",
        "      CPU: foo_cpu",
        "      ^",
    ]


def test_a_key_after_a_quoted_value_is_told_the_same() -> None:
    assert diagnose("a: 'b'\n  c: d\n") == [
        "spec.yaml:2:3: error: invalid YAML: the key 'c' is indented more than the keys before it",
        "    c: d",
        "    ^",
        "spec.yaml:1:1: note: the mapping that holds it starts here",
        "  a: 'b'",
        "  ^",
    ]


def test_a_key_between_two_indentations_names_both_columns() -> None:
    text = (
        "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_cpu\n   variants: function\n"
    )
    assert diagnose(text) == [
        "spec.yaml:4:4: error: invalid YAML: the key 'variants' at column 4 lines up with "
        "neither the keys of its mapping (column 3) nor the line before it (column 5)",
        "     variants: function",
        "     ^~~~~~~~",
        "spec.yaml:1:1: note: the entry starts here",
        "  - func: foo(Tensor self) -> Tensor",
        "  ^",
    ]


def test_a_key_indented_less_than_its_entry_keys() -> None:
    assert diagnose("- func: foo\n variants: function\n") == [
        "spec.yaml:2:2: error: invalid YAML: the key 'variants' at column 2 lines up with "
        "neither the keys before it (column 3) nor the list's '-' (column 1)",
        "   variants: function",
        "   ^~~~~~~~",
        "spec.yaml:1:1: note: the entry starts here",
        "  - func: foo",
        "  ^",
    ]


def test_a_list_item_at_the_wrong_indentation() -> None:
    text = "- func: foo\n  variants:\n    - function\n   - method\n"
    assert diagnose(text) == [
        "spec.yaml:4:4: error: invalid YAML: the list item at column 4 lines up with neither the "
        "keys of its mapping (column 3) nor the line before it (column 5)",
        "     - method",
        "     ^",
        "spec.yaml:1:1: note: the entry starts here",
        "  - func: foo",
        "  ^",
    ]


def test_a_list_item_where_a_key_belongs() -> None:
    assert diagnose("backend: XLA\n- add\n") == [
        "spec.yaml:2:1: error: invalid YAML: a list item where the mapping expects a key",
        "  - add",
        "  ^",
        "spec.yaml:1:1: note: the mapping that holds it starts here",
        "  backend: XLA",
        "  ^",
    ]


# -- a missing '- ' ----------------------------------------------------------------------


def test_an_entry_without_its_dash() -> None:
    text = (
        "- func: foo(Tensor self) -> Tensor\n"
        "  variants: function\n"
        "\n"
        "func: bar(Tensor self) -> Tensor\n"
    )
    assert diagnose(text) == [
        "spec.yaml:4:1: error: invalid YAML: a key where the list expects its next item; did you "
        "leave out the '- ' that starts an entry?",
        "  func: bar(Tensor self) -> Tensor",
        "  ^~~~",
        "spec.yaml:1:1: note: the list starts here",
        "  - func: foo(Tensor self) -> Tensor",
        "  ^",
    ]


def test_an_entry_without_its_dash_in_a_nested_list() -> None:
    text = "ops:\n  - name: foo\n    schema: s\n  name: bar\n"
    assert diagnose(text) == [
        "spec.yaml:4:3: error: invalid YAML: a key where the list expects its next item; did you "
        "leave out the '- ' that starts an entry?",
        "    name: bar",
        "    ^~~~",
        "spec.yaml:2:3: note: the list starts here",
        "    - name: foo",
        "    ^",
    ]


def test_an_entry_without_its_dash_at_its_keys_indentation() -> None:
    """Valid YAML: the keys join the entry before, whose first key then comes again."""
    text = (
        "- func: foo(Tensor self) -> Tensor\n"
        "  variants: function\n"
        "\n"
        "  func: bar(Tensor self) -> Tensor\n"
    )
    assert diagnose(text) == [
        "spec.yaml:4:3: error: duplicate key 'func' (first given on line 1); does a new item "
        "start here, without its '- '?",
        "    func: bar(Tensor self) -> Tensor",
        "    ^~~~",
    ]


# -- tabs --------------------------------------------------------------------------------


SPACES_ONLY = "invalid YAML: a tab character: YAML indents with spaces only"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- func: foo\n\tvariants: function\n",
            [f"spec.yaml:2:1: error: {SPACES_ONLY}", "  \tvariants: function", "  ^"],
        ),
        (
            "- func: foo\n  dispatch:\n  \tCPU: foo_cpu\n",
            [f"spec.yaml:3:3: error: {SPACES_ONLY}", "    \tCPU: foo_cpu", "    ^"],
        ),
        ("a: |\n\tb\n", [f"spec.yaml:2:1: error: {SPACES_ONLY}", "  \tb", "  ^"]),
        (
            "- func: foo\n-\tfunc: bar\n",
            [
                "spec.yaml:2:2: error: invalid YAML: a tab character where YAML allows only spaces",
                "  -\tfunc: bar",
                "   ^",
            ],
        ),
    ],
    ids=["indentation", "after spaces", "block scalar", "after a dash"],
)
def test_a_tab_is_named_at_its_column(text: str, expected: list[str]) -> None:
    assert diagnose(text) == expected


def test_a_tab_after_a_key_is_a_separator_yaml_accepts() -> None:
    assert parse_yaml(PATH, "a:\tb\n").root == {"a": "b"}


# -- quotes and brackets ---------------------------------------------------------------


def test_an_unclosed_quote_is_reported_at_the_quote() -> None:
    text = '- func: "foo(Tensor self) -> Tensor\n  variants: function\n'
    assert diagnose(text) == [
        'spec.yaml:1:9: error: invalid YAML: the " that opens this value is never closed',
        '  - func: "foo(Tensor self) -> Tensor',
        "          ^",
    ]


def test_an_unclosed_bracket_is_reported_where_the_closing_one_belongs() -> None:
    text = "- func: foo\n  variants: [function, method\n  dispatch:\n    CPU: foo_cpu\n"
    assert diagnose(text) == [
        "spec.yaml:2:30: error: invalid YAML: expected ']' to close the '['",
        "    variants: [function, method",
        "                               ^",
    ]


def test_an_unclosed_bracket_over_lines_notes_where_it_opens() -> None:
    assert diagnose("a: [\n  b,\n  c\nd: 1\n") == [
        "spec.yaml:3:4: error: invalid YAML: expected ']' to close the '['",
        "    c",
        "     ^",
        "spec.yaml:1:4: note: the list starts here",
        "  a: [",
        "     ^",
    ]


def test_an_unclosed_brace_and_two_brackets_on_a_line() -> None:
    assert diagnose("a: {b: c\nd: 1\n") == [
        "spec.yaml:1:9: error: invalid YAML: expected '}' to close the '{'",
        "  a: {b: c",
        "          ^",
    ]
    assert diagnose("a: [b, [c]\nd: 1\n") == [
        "spec.yaml:1:11: error: invalid YAML: expected ']' to close the '[' at column 4",
        "  a: [b, [c]",
        "            ^",
    ]


def test_a_closing_bracket_with_no_opening_one() -> None:
    assert diagnose("a: [b]]\n") == [
        "spec.yaml:1:7: error: invalid YAML: a ']' with no '[' before it",
        "  a: [b]]",
        "        ^",
    ]


def test_text_after_a_quoted_value() -> None:
    assert diagnose("a: 'b' c\n") == [
        "spec.yaml:1:8: error: invalid YAML: text after the closing ' of a quoted value; quote "
        "the whole value",
        "  a: 'b' c",
        "         ^",
    ]


def test_an_unknown_escape_in_a_double_quoted_value() -> None:
    assert diagnose('a: "b\\q"\n') == [
        "spec.yaml:1:6: error: invalid YAML: '\\q' is not an escape of a double-quoted value; "
        "write '\\\\' for a backslash, or quote the value with ' instead",
        '  a: "b\\q"',
        "       ^~",
    ]


# -- keys and values -------------------------------------------------------------------


def test_a_colon_and_space_inside_a_plain_value() -> None:
    text = "- func: foo(Tensor self) -> Tensor\n  python_module: nn: x\n"
    assert diagnose(text) == [
        "spec.yaml:2:20: error: invalid YAML: a ': ' inside a plain value; put the value in quotes",
        "    python_module: nn: x",
        "                     ^",
    ]


def test_a_key_without_a_space_after_its_colon() -> None:
    assert diagnose("- func: foo\n  variants:function\n  dispatch: x\n") == [
        "spec.yaml:2:11: error: invalid YAML: the key 'variants' needs a space after its ':'",
        "    variants:function",
        "            ^",
    ]
    assert diagnose("a:1\nb: 2\n") == [
        "spec.yaml:1:2: error: invalid YAML: the key 'a' needs a space after its ':'",
        "  a:1",
        "   ^",
    ]


def test_a_key_without_a_colon() -> None:
    assert diagnose("- func: foo\n  variants\n  dispatch: x\n") == [
        "spec.yaml:2:3: error: invalid YAML: expected ':' after 'variants'",
        "    variants",
        "    ^~~~~~~~",
    ]


def test_a_list_on_its_keys_line() -> None:
    assert diagnose("a: - b\n") == [
        "spec.yaml:1:4: error: invalid YAML: a list cannot start on the line of its key: start "
        "it on the next line",
        "  a: - b",
        "     ^",
    ]


def test_a_reserved_character_starting_a_value() -> None:
    assert diagnose("a: @b\n") == [
        "spec.yaml:1:4: error: invalid YAML: a plain value cannot start with '@'; put the value "
        "in quotes",
        "  a: @b",
        "     ^",
    ]


# -- the rest --------------------------------------------------------------------------


def test_a_control_character_is_located() -> None:
    assert diagnose("a: é\x01\n") == [
        "spec.yaml:1:5: error: invalid YAML: the character U+0001 is not allowed in YAML",
        "  a: é\x01",
        "      ^",
    ]


def test_aliases_anchors_and_documents() -> None:
    assert diagnose("a: *x\n") == [
        "spec.yaml:1:4: error: invalid YAML: the alias '*x' names no anchor: '&x' is not defined "
        "before it",
        "  a: *x",
        "     ^~",
    ]
    assert diagnose("a: &x 1\nb: &x 2\n") == [
        "spec.yaml:2:4: error: invalid YAML: the anchor '&x' is defined twice",
        "  b: &x 2",
        "     ^~",
        "spec.yaml:1:4: note: it is first defined here",
        "  a: &x 1",
        "     ^",
    ]
    assert diagnose("a: 1\n---\nb: 2\n") == [
        "spec.yaml:2:1: error: invalid YAML: a second document: a spec file holds one YAML "
        "document",
        "  ---",
        "  ^~~",
    ]


def test_other_errors_keep_libyamls_words_at_its_mark() -> None:
    assert diagnose("a: |x\n  b\n") == [
        "spec.yaml:1:5: error: invalid YAML: expected comment or line break",
        "  a: |x",
        "      ^",
    ]


def test_crlf_line_ends_give_the_same_places() -> None:
    text = "- func: foo\n  variants: function\n   python_module: nn\n"
    assert diagnose(text.replace("\n", "\r\n")) == diagnose(text)


# -- through the command line ----------------------------------------------------------


def check_library(tmp_path: Path, text: str) -> list[str]:
    """The lines `opgen check --library` prints for the spec `text`, which it rejects."""
    spec = tmp_path / "ops.yaml"
    spec.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    assert (main(["check", "--library", str(spec)], out, err), out.getvalue()) == (1, "")
    return err.getvalue().replace(str(tmp_path), "$DIR").splitlines()


def test_a_library_spec_with_an_over_indented_key(tmp_path: Path) -> None:
    text = (
        "# mylib's operators\n"
        "- func: mylib::scale(Tensor self, Scalar factor) -> Tensor\n"
        "  dispatch:\n"
        "    CPU: scale_cpu\n"
        "    Meta: scale_meta\n"
        "   tags: pt2_compliant_tag\n"
    )
    assert check_library(tmp_path, text) == [
        "$DIR/ops.yaml:6:4: error: invalid YAML: the key 'tags' at column 4 lines up with "
        "neither the keys of its mapping (column 3) nor the line before it (column 5)",
        "     tags: pt2_compliant_tag",
        "     ^~~~",
        "$DIR/ops.yaml:2:1: note: the entry starts here",
        "  - func: mylib::scale(Tensor self, Scalar factor) -> Tensor",
        "  ^",
    ]


def test_a_library_spec_with_an_entry_without_its_dash(tmp_path: Path) -> None:
    text = (
        "# mylib's operators\n"
        "- func: mylib::scale(Tensor self, Scalar factor) -> Tensor\n"
        "  dispatch:\n"
        "    CPU: scale_cpu\n"
        "\n"
        "func: mylib::shift(Tensor self, Scalar by) -> Tensor\n"
        "  dispatch:\n"
        "    CPU: shift_cpu\n"
    )
    assert check_library(tmp_path, text) == [
        "$DIR/ops.yaml:6:1: error: invalid YAML: a key where the list expects its next item; "
        "did you leave out the '- ' that starts an entry?",
        "  func: mylib::shift(Tensor self, Scalar by) -> Tensor",
        "  ^~~~",
        "$DIR/ops.yaml:2:1: note: the list starts here",
        "  - func: mylib::scale(Tensor self, Scalar factor) -> Tensor",
        "  ^",
    ]


# -- any broken document -----------------------------------------------------------------

SPEC = """\
# two entries
- func: add(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU, CUDA: add_kernel
  tags: [core, pointwise]
  doc: |
    Adds.
- func: neg(Tensor self) -> Tensor
  python_module: 'nn'
"""
EDITS = ["\t", " ", "  ", "- ", ":", ": ", "'", '"', "[", "]", "{", "\n", "#", "@", "&a ", "*a"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, len(SPEC)), st.integers(0, 2), st.sampled_from(EDITS)),
        min_size=1,
        max_size=3,
    )
)
def test_every_error_is_placed_in_the_document(edits: list[tuple[int, int, str]]) -> None:
    text = SPEC
    for at, removed, inserted in edits:
        text = text[:at] + inserted + text[at + removed :]
    try:
        parse_yaml(PATH, text)
    except SpecError as e:
        lines = text.splitlines()
        assert e.diagnostics[0].severity == "error"
        severities = [d.severity for d in e.diagnostics]
        assert severities == sorted(severities, key=lambda s: s == "note")
        for d in e.diagnostics:
            where = d.location
            assert where is not None and 1 <= where.line <= len(lines) + 1
            assert where.col is not None and where.col >= 1
            if where.line <= len(lines):  # the caret is on the line, or just after its end
                assert where.col <= len(lines[where.line - 1]) + 1, d
