"""The files of `opgen python` besides the bindings proper, byte for byte against upstream.

- python_functions.h and python_functions_<i>.cpp (+ Everything): the backward
  nodes' Python classes, built from the derivatives model. On torch's spec and
  on both autograd variations (against upstream's gen_autograd_functions_python
  alone, since the edited variation has an operator the bindings reject):
  together they save values of every kind a node has a Python property for;
- python_return_types.h/.cpp: the structseqs of functions with named returns;
- python_enum_tag.cpp: the tags of tags.yaml.

Each emitter runs alone (`opgen_python_files`), so these tests pass whatever
the other files of the target do.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.targets.emitters import Emitted
from opgen.targets.python.enum_tag import emit_enum_tag
from opgen.targets.python.python_functions import emit_python_functions
from opgen.targets.python.return_types import emit_return_types

from .aten_trees import Tree
from .autograd_trees import AutogradInputs, assert_family
from .autograd_variations import VARIATIONS
from .python_trees import opgen_python_files

Variations = Callable[[str, bool], tuple[AutogradInputs, Tree]]

PYTHON_FUNCTIONS = [
    "out/python_functions.h",
    "out/python_functionsEverything.cpp",
    *(f"out/python_functions_{i}.cpp" for i in range(5)),
]
RETURN_TYPES = ["out/python_return_types.h", "out/python_return_types.cpp"]
ENUM_TAG = ["out/python_enum_tag.cpp"]

FAMILIES: list[tuple[Callable[..., Emitted], list[str]]] = [
    (emit_python_functions, PYTHON_FUNCTIONS),
    (emit_return_types, RETURN_TYPES),
    (emit_enum_tag, ENUM_TAG),
]


@pytest.mark.parametrize(("emit", "paths"), FAMILIES, ids=lambda x: getattr(x, "__name__", ""))
def test_family_matches_torchgen(
    emit: Callable[..., Emitted],
    paths: list[str],
    autograd_inputs: AutogradInputs,
    torchgen_python: Tree,
) -> None:
    ours = opgen_python_files(autograd_inputs, [emit])
    assert sorted(ours) == sorted(paths)
    assert_family(torchgen_python, ours, lambda path: path in paths)


@pytest.mark.parametrize("name", sorted(VARIATIONS))
def test_python_functions_of_variation_match_torchgen(
    name: str, torchgen_python_variations: Variations
) -> None:
    inputs, theirs = torchgen_python_variations(name, True)
    assert sorted(theirs.files) == sorted(PYTHON_FUNCTIONS)
    ours = opgen_python_files(inputs, [emit_python_functions])
    assert_family(theirs, ours, lambda path: True)


def test_return_types_and_tags_of_trimmed_variation_match_torchgen(
    torchgen_python_variations: Variations,
) -> None:
    inputs, theirs = torchgen_python_variations("trimmed", False)
    ours = opgen_python_files(inputs, [emit_return_types, emit_enum_tag])
    # The trimmed spec still has structseqs (max, sort, aminmax, ...).
    assert b"get_max_structseq" in ours["out/python_return_types.cpp"]
    assert_family(theirs, ours, lambda path: path in RETURN_TYPES + ENUM_TAG)


def test_the_specs_save_values_of_every_kind(
    torchgen_python: Tree, torchgen_python_variations: Variations
) -> None:
    """Between them, torch's spec and the variations give every property form upstream writes."""
    trees = [torchgen_python, *(torchgen_python_variations(name, True)[1] for name in VARIATIONS)]
    texts = b"".join(tree.files["out/python_functionsEverything.cpp"] for tree in trees)
    forms = {
        "saved tensor": b"return THPVariable_Wrap(prop.unpack(self->cdata));",
        "saved tensor list": b"THPVariable_Wrap(prop[i].unpack(self->cdata))",
        "optional": b"if (!opt_prop.has_value())",
        "optional array": b"if (!opt_prop.list.has_value())",
        "int64": b"PyLong_FromUnsignedLong((int64_t) prop)",
        "SymInt": b"if (auto m = prop.maybe_as_int())",
        "double": b"PyFloat_FromDouble((double) prop);",
        "bool": b"  if (prop) {",
        "string": b"PyUnicode_FromStringAndSize",
        "scalar": b"if (prop.isComplex())",
        "int64 list": b"PyLong_FromUnsignedLong((uint64_t) prop[i])",
        "SymInt list": b"auto si = prop[i];",
        "scalar list": b"if (prop[i].isComplex())",
        "no property": b"THP_FUNCTION_DEFAULT_PROPERTIES,\n\n",
    }
    assert [form for form, text in forms.items() if text not in texts] == []
