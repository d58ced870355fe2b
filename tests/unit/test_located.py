"""`opgen.spec.located`: where a character of a YAML string value is written in the file.

Each case is a one-key document, the offset of a character in the value and
where that character is written (line, column); None when the value cannot be
placed line by line, so an error points at the whole value.
"""

from __future__ import annotations

import pytest

from opgen.diagnostics import Location
from opgen.spec.load import parse_yaml
from opgen.spec.located import written
from opgen.spec.yaml_values import YamlMap


def place(document: str, offset: int) -> tuple[int, int | None]:
    root = parse_yaml("spec.yaml", document).root
    assert isinstance(root, YamlMap)
    value = written(root, "func", document.split("\n"))
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
    value = written(root, "func", document.split("\n"))
    assert value.at(12, 3) == root.value_location("func")
    assert isinstance(value.at(12, 3), Location)
