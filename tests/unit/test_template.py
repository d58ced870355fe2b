"""`opgen.template`: each rule of the template language, as template in, exact text out.

The rules are torchgen's `CodeTemplate`'s (tests/conformance/test_template.py checks
them against it); several are surprising, and the tests say which.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

from opgen.diagnostics import Location
from opgen.template import Template, TemplateKeyError


def render(text: str, **values: object) -> str:
    return Template(text).substitute(values)


# Placeholder syntax


def test_bare_placeholder() -> None:
    assert render("int $name = 0;", name="count") == "int count = 0;"


def test_braced_placeholder_can_touch_word_characters() -> None:
    assert render("${scalar}_t x;", scalar="int64") == "int64_t x;"


def test_bare_name_takes_every_word_character() -> None:
    assert render("$scalar_t", scalar_t="float", scalar="no") == "float"


def test_name_ends_at_first_non_word_character() -> None:
    assert render("$self.$method()", self="t", method="abs") == "t.abs()"


def test_name_cannot_start_with_a_decimal_digit() -> None:
    assert render("$1 ${2x} $_1", _1="u") == "$1 ${2x} u"


def test_names_follow_unicode_word_rules() -> None:
    assert render("$café ${名前}", café="a", 名前="b") == "a b"


def test_non_decimal_digit_can_start_a_name() -> None:
    # Surprising: only decimal digits are excluded, so superscript two starts a name.
    assert render("x$²", **{"²": "**2"}) == "x**2"


def test_malformed_placeholders_are_literal_text() -> None:
    text = "$ ${ ${x ${ x} ${x y} ${} ${,} $,x $"
    assert render(text, x="X") == text


def test_double_dollar_is_a_dollar_then_a_placeholder() -> None:
    # There is no escape: `$$x` is not a literal `$x`.
    assert render("$$x", x="1") == "$1"


def test_text_without_placeholders_is_unchanged() -> None:
    assert render("a {\n  b;\n}\n") == "a {\n  b;\n}\n"


# Inline placeholders (text other than whitespace before them on the line)


def test_inline_list_is_joined_with_comma_space() -> None:
    assert render("f($args);", args=["a", 1, None]) == "f(a, 1, None);"


def test_inline_empty_list_is_nothing() -> None:
    assert render("f($args);", args=[]) == "f();"


def test_comma_before_when_list_is_not_empty() -> None:
    template = Template("f(self${,args});")
    assert template.substitute(args=["a", "b"]) == "f(self, a, b);"
    assert template.substitute(args=[]) == "f(self);"


def test_comma_after_when_list_is_not_empty() -> None:
    template = Template("f(${args,}out);")
    assert template.substitute(args=["a"]) == "f(a, out);"
    assert template.substitute(args=[]) == "f(out);"


def test_commas_on_both_sides() -> None:
    template = Template("f(self${,args,}out);")
    assert template.substitute(args=["a"]) == "f(self, a, out);"
    assert template.substitute(args=[]) == "f(selfout);"


def test_commas_are_ignored_for_a_non_list_value() -> None:
    assert render("f(self${,arg,}out);", arg="a") == "f(selfaout);"
    assert render("f(self${,arg});", arg="") == "f(self);"


def test_inline_value_is_str_of_it() -> None:
    assert render("$a $b $c $d", a=3, b=None, c=True, d=2.5) == "3 None True 2.5"


def test_only_a_list_is_a_list() -> None:
    # Surprising: a tuple is rendered with str(), parentheses and all.
    assert render("f($args)", args=("a", "b")) == "f(('a', 'b'))"


def test_list_subclass_is_a_list() -> None:
    class Args(list[str]):
        pass

    assert render("f($args)", args=Args(["a", "b"])) == "f(a, b)"


def test_inline_multi_line_value_is_inserted_verbatim() -> None:
    # Continuation lines are not indented and keep their trailing whitespace.
    assert render("  x = $v;\n", v="a +  \n  b\n") == "  x = a +  \n  b\n;\n"


def test_inline_list_elements_are_not_split_into_lines() -> None:
    assert render("f($args)", args=["a\nb", "c"]) == "f(a\nb, c)"


def test_only_the_first_placeholder_of_a_line_can_be_a_block() -> None:
    text = "  $a $b\n"
    assert render(text, a=["1", "2"], b=["3", "4"]) == "  1\n  2 3, 4\n"


def test_placeholder_after_a_carriage_return_is_inline() -> None:
    # Only `\n` starts a line; from_file turns `\r\n` into `\n` when reading.
    assert render("x\r  $a\n", a=["p", "q"]) == "x\r  p, q\n"


# Block placeholders (only whitespace before them on the line)


def test_block_list_puts_each_element_on_its_own_indented_line() -> None:
    text = "void f() {\n  $body\n}\n"
    assert render(text, body=["a();", "b();"]) == "void f() {\n  a();\n  b();\n}\n"


def test_block_at_column_zero() -> None:
    # Surprising: a list at the start of a line is one element per line, not `a, b`.
    assert render("$decls\n", decls=["int a;", "int b;"]) == "int a;\nint b;\n"


def test_braced_block() -> None:
    assert render("    ${body}\n", body=["a;", "b;"]) == "    a;\n    b;\n"


def test_block_ignores_commas() -> None:
    assert render("  ${,args,}\n", args=["a", "b"]) == "  a\n  b\n"


def test_block_with_text_after_it() -> None:
    # Only what is before the placeholder counts; the text after follows the last line.
    assert render("  $items;\n", items=["a", "b"]) == "  a\n  b;\n"


def test_block_empty_list_leaves_the_lines_newline() -> None:
    assert render("{\n  $body\n}\n", body=[]) == "{\n\n}\n"


def test_block_element_lines_are_all_indented() -> None:
    body = ["if (c) {\n  f();\n}", "g();"]
    expected = "  if (c) {\n    f();\n  }\n  g();\n"
    assert render("  $body\n", body=body) == expected


def test_nested_blocks_indent_cumulatively() -> None:
    inner = Template("if (c) {\n  $stmts\n}\n").substitute(stmts=["f();", "g();"])
    outer = Template("void h() {\n    $body\n}\n").substitute(body=[inner])
    assert outer == "void h() {\n    if (c) {\n      f();\n      g();\n    }\n}\n"


def test_block_string_value_is_indented_like_a_one_element_list() -> None:
    assert render("  $v\n", v="a\nb\n") == "  a\n  b\n"


def test_block_non_string_value() -> None:
    assert render("  $v\n", v=42) == "  42\n"


def test_block_tab_indent() -> None:
    assert render("\t$v\n", v=["a", "b"]) == "\ta\n\tb\n"


def test_block_unicode_whitespace_indent() -> None:
    assert render("\u00a0$v\n", v=["a", "b"]) == "\u00a0a\n\u00a0b\n"


def test_block_strips_trailing_whitespace_of_each_line() -> None:
    assert render("  $v\n", v=["a  ", "b\t\n  c \n"]) == "  a\n  b\n    c\n"


def test_block_blank_lines_are_empty_not_indented() -> None:
    assert render("  $v\n", v=["a\n   \n\nb"]) == "  a\n\n\n  b\n"


def test_block_keeps_leading_and_drops_trailing_blank_lines() -> None:
    assert render("  $v\n", v=["\n\na\n\n\n"]) == "\n\n  a\n"


def test_block_of_only_blank_lines_is_empty() -> None:
    assert render("<\n  $v\n>", v=["  \n\t", ""]) == "<\n\n>"


def test_block_empty_element_adds_no_line_but_a_newline_element_adds_one() -> None:
    assert render("  $v\n", v=["a", "", "b"]) == "  a\n  b\n"
    assert render("  $v\n", v=["a", "\n", "b"]) == "  a\n\n  b\n"


def test_block_splits_lines_at_every_unicode_line_break() -> None:
    value = "a\rb\r\nc\x0bd\x0ce\x1cf\x85g\u2028h"
    assert render("$v\n", v=value) == "a\nb\nc\nd\ne\nf\ng\nh\n"
    assert render("=$v\n", v=value) == f"={value}\n"


def test_block_list_elements_split_at_every_line_break() -> None:
    for br in "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029":
        assert render("  $v\n", v=["int a;", f"b{br}c"]) == "  int a;\n  b\n  c\n", repr(br)


def test_block_strips_trailing_tabs_and_unit_separators() -> None:
    # "\x1f" is whitespace to `str.rstrip` but, unlike "\x1e", not a line break.
    assert render("$v\n", v=["a\t\nb\x1f\nc \t\x1f", "d \x1f\t"]) == "a\nb\nc\nd\n"


def test_block_runs_of_blank_lines_stay_unindented() -> None:
    assert render("  $v\n", v=["\n\n\na", "\n", "\n", "  \n\nb"]) == "\n\n\n  a\n\n\n\n\n  b\n"


def test_block_str_subclass_renders_by_its_str() -> None:
    class Upper(str):
        def __str__(self) -> str:
            return self.upper()

    assert render("  $v\n", v=["a;", Upper("b;")]) == "  a;\n  B;\n"


def test_block_indent_with_a_line_break_character() -> None:
    # Surprising: the indent is split into lines too, so a form feed becomes a newline.
    assert render("\x0c $v\n", v=["p", "q"]) == "\n p\n\n q\n"


# Looking up values


def test_keyword_values_win_over_the_mapping() -> None:
    template = Template("$a $b")
    assert template.substitute({"a": "env", "b": "env"}, b="kw") == "env kw"


def test_no_values_needed_without_placeholders() -> None:
    assert Template("plain").substitute() == "plain"


def test_any_mapping_will_do() -> None:
    class Upper(Mapping[str, object]):
        def __getitem__(self, key: str) -> object:
            return key.upper()

        def __iter__(self) -> Iterator[str]:
            return iter(())

        def __len__(self) -> int:
            return 0

    assert Template("$a${b}").substitute(Upper()) == "AB"
    assert Template("$a").substitute(MappingProxyType({"a": 1})) == "1"


def test_a_placeholder_used_twice_is_looked_up_each_time() -> None:
    assert render("$a-$a\n  $a\n", a=["x", "y"]) == "x\ny-x, y\n  x\n  y\n"


def test_template_is_reusable() -> None:
    template = Template("  $v\n")
    assert template.substitute(v=["a"]) == "  a\n"
    assert template.substitute(v=["b", "c"]) == "  b\n  c\n"


def test_missing_value_names_the_placeholder_and_where_it_is() -> None:
    template = Template("a\n  x = ${b};\n  $c\n$b\n", "Example.h")
    with pytest.raises(TemplateKeyError) as info:
        template.substitute({"a": 1})
    error = info.value
    assert isinstance(error, KeyError)
    assert error.args == ("b",)
    assert error.name == "b"
    assert error.location == Location("Example.h", 2, 7, 4)
    assert error.missing == ("b", "c")
    assert str(error) == (
        "Example.h:2:7: error: no value for template placeholder 'b' (also missing: 'c')"
    )


def test_missing_value_of_an_unnamed_template() -> None:
    with pytest.raises(TemplateKeyError) as info:
        Template("$x").substitute()
    assert str(info.value) == "<template>:1:1: error: no value for template placeholder 'x'"


# Files and introspection


def test_from_file_reads_utf8_with_universal_newlines(tmp_path: Path) -> None:
    path = tmp_path / "T.h"
    path.write_bytes("// é\r\n  $v\r\n".encode())
    template = Template.from_file(path)
    assert template.filename == str(path)
    assert template.substitute(v=["a", "b"]) == "// é\n  a\n  b\n"


def test_from_file_missing_value_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "T.h"
    path.write_text("x\n$y\n")
    with pytest.raises(TemplateKeyError, match=r"T\.h:2:1: error: .* 'y'"):
        Template.from_file(str(path)).substitute()


def test_placeholders_and_names() -> None:
    template = Template("f(${,args});\n  $body\n$args")
    assert template.names == ("args", "body")
    assert [
        (p.name, p.block, p.indent, p.comma_before, p.comma_after, str(p.location))
        for p in template.placeholders
    ] == [
        ("args", False, "", True, False, "<template>:1:3"),
        ("body", True, "  ", False, False, "<template>:2:3"),
        ("args", True, "", False, False, "<template>:3:1"),
    ]
