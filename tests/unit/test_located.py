"""`opgen.spec.yaml.located`: where a character of a YAML string value is written in the file.

Each case is a one-key document, the offset of a character in the value and
where that character is written (line, column); None when the value cannot be
placed line by line, so an error points at the whole value.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opgen.diagnostics import Location
from opgen.spec.yaml.load import parse_yaml
from opgen.spec.yaml.located import written
from opgen.spec.yaml.values import YamlMap


def place(document: str, offset: int) -> tuple[int, int | None]:
    root = parse_yaml("spec.yaml", document).root
    assert isinstance(root, YamlMap)
    value = written(root, "func")
    at = value.at(offset, 3)
    assert at.file == "spec.yaml"
    return at.line, at.col


@pytest.mark.parametrize(
    ("document", "offset", "expected"),
    [
        # on one line: an offset is a column
        ("func: foo(Tensor self) -> Tensor\n", 4, (1, 11)),
        ("func: 'foo(Tensor self)'\n", 4, (1, 12)),
        # a plain scalar wrapped onto the next lines: joined by spaces
        ("func: foo(Tensor self,\n  Tensor other) -> Tensor\n", 17, (2, 3)),
        ("func: foo(Tensor self,\n  Tensor other,\n    int dim) -> Tensor\n", 31, (3, 5)),
        ("func: foo(Tensor self,\n  Tensor other) -> Tensor\n", 15, (1, 22)),
        # a quoted one, to its closing quote
        ('func: "foo(Tensor self,\n  Tensor other)"\n', 17, (2, 3)),
        ("func: 'foo(Tensor self,\n   Tensor other)' # note\n", 17, (2, 4)),
        # block scalars, line by line
        ("func: |\n  foo(Tensor self,\n  Tensor other)\n", 17, (3, 3)),
        ("func: >-\n    foo(Tensor self,\n    Tensor other)\n", 17, (3, 5)),
    ],
)
def test_a_character_is_placed_where_it_is_written(
    document: str, offset: int, expected: tuple[int, int]
) -> None:
    assert place(document, offset) == expected


@pytest.mark.parametrize(
    "document",
    [
        "func: foo(Tensor self,\n\n  Tensor other)\n",  # a blank line folds to a line break
        "func: 'it''s (Tensor self)'\n",  # an escape: the text is not the source
        'func: "foo(Tensor self,\\\n  Tensor other)"\n',  # an escaped line break
    ],
)
def test_a_value_not_written_as_read_is_placed_whole(document: str) -> None:
    root = parse_yaml("spec.yaml", document).root
    assert isinstance(root, YamlMap)
    value = written(root, "func")
    assert value.at(12, 3) == root.value_location("func")
    assert isinstance(value.at(12, 3), Location)


word = st.from_regex(r"[a-z][a-z0-9_(),.>-]{0,8}", fullmatch=True)
words = st.lists(word, min_size=1, max_size=4)


@given(
    lines=st.lists(words, min_size=1, max_size=4),
    indent=st.integers(min_value=1, max_value=6),
    quote=st.sampled_from(["", "'", '"']),
)
def test_every_placed_character_is_the_one_written_there(
    lines: list[list[str]], indent: int, quote: str
) -> None:
    """A value wrapped over lines: each of its characters, but the spaces that stand for
    line breaks, is placed on the source character it was read from."""
    body = ("\n" + " " * indent).join(" ".join(line) for line in lines)
    document = f"func: {quote}{body}{quote}\n"
    root = parse_yaml("spec.yaml", document).root
    assert isinstance(root, YamlMap)
    source = document.split("\n")
    value = written(root, "func")
    assert value.text == " ".join(" ".join(line) for line in lines)
    for offset, char in enumerate(value.text):
        at = value.at(offset)
        assert at.col is not None
        line = source[at.line - 1]
        if at.col <= len(line):
            assert line[at.col - 1] == char
        else:  # just past the end of a line: the line break, read as a space
            assert (char, at.col) == (" ", len(line) + 1)
