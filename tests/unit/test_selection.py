"""Operator selection: selection YAML snippets in, exact answers or exact errors out."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.diagnostics import SpecError
from opgen.frozen import FrozenInstanceError
from opgen.spec.native import NativeFunction
from opgen.spec.selection import (
    OperatorSelection,
    SelectedOperator,
    op_name_from_native_function,
    strip_operator_overload_name,
)

Load = Callable[[str], OperatorSelection]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "selection.yaml"


@pytest.fixture
def load(path: Path) -> Load:
    """The selection written inline (dedented) to a file."""

    def read(text: str) -> OperatorSelection:
        path.write_text(textwrap.dedent(text))
        return OperatorSelection.from_yaml_path(str(path))

    return read


@pytest.fixture
def error_of(load: Load, path: Path) -> Callable[[str], str]:
    """Every diagnostic of a bad selection, with its path written as `$FILE`."""

    def error(text: str) -> str:
        with pytest.raises(SpecError) as e:
            load(text)
        return str(e.value).replace(str(path), "$FILE")

    return error


def answers(s: OperatorSelection, name: str) -> tuple[bool, bool, bool]:
    """(selected, selected for training, root operator) for one operator name."""
    return (
        s.is_operator_selected(name),
        s.is_operator_selected_for_training(name),
        s.is_root_operator(name),
    )


# --- where selections come from -------------------------------------------------------


def test_everything_selects_every_operator_dtype_and_flag() -> None:
    s = OperatorSelection.everything()
    assert s.include_all_operators
    assert answers(s, "aten::anything.at_all") == (True, True, True)
    assert s.is_kernel_dtype_selected("any_kernel", "Float")
    assert s.operators == {}
    assert s.include_all_non_op_selectives is False


def test_allowlist_selects_every_overload_as_root_but_none_for_training() -> None:
    s = OperatorSelection.from_allowlist(["aten::add", "aten::mul.Tensor", "aten::add"])
    assert not s.include_all_operators
    assert sorted(s.operators) == ["aten::add", "aten::mul.Tensor"]
    assert answers(s, "aten::add") == (True, False, True)
    assert answers(s, "aten::add.Tensor") == (True, False, True)
    assert answers(s, "aten::mul.Tensor") == (True, False, True)
    assert answers(s, "aten::mul.Scalar") == (False, False, False)
    assert answers(s, "aten::mul") == (False, False, False)
    assert s.is_kernel_dtype_selected("any_kernel", "Float")  # every non-operator selective


def test_empty_allowlist_selects_nothing() -> None:
    s = OperatorSelection.from_allowlist([])
    assert answers(s, "aten::add") == (False, False, False)


def test_from_flags_mirrors_the_two_command_line_flags(load: Load, path: Path) -> None:
    load("operators: {aten::relu: {}}")
    assert OperatorSelection.from_flags(None, None) == OperatorSelection.everything()
    assert OperatorSelection.from_flags(["aten::add"], None) == OperatorSelection.from_allowlist(
        ["aten::add"]
    )
    assert OperatorSelection.from_flags([], None).is_operator_selected("aten::add") is False
    from_file = OperatorSelection.from_flags(None, str(path))
    assert sorted(from_file.operators) == ["aten::relu"]
    with pytest.raises(ValueError, match="cannot be given together"):
        OperatorSelection.from_flags(["aten::add"], str(path))


# --- answers ------------------------------------------------------------------------------

OVERLOADS = """\
operators:
  aten::add:
    is_used_for_training: false
  aten::add.Tensor:
    is_root_operator: false
    include_all_overloads: false
  aten::mul:
    include_all_overloads: false
  aten::div:
    is_root_operator: false
  aten::div.Tensor_mode:
    is_used_for_training: false
  aten::index.Tensor:
    include_all_overloads: true
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # A base entry covers every overload (include_all_overloads defaults to true).
        ("aten::add", (True, False, True)),
        ("aten::add.Scalar", (True, False, True)),
        # The exact entry's root flag wins; its training flag only adds to the base's.
        ("aten::add.Tensor", (True, True, False)),
        # Without include_all_overloads a base name selects only itself.
        ("aten::mul", (True, True, True)),
        ("aten::mul.Tensor", (False, False, False)),
        ("aten::div.Tensor", (True, True, False)),
        ("aten::div.Tensor_mode", (True, True, True)),
        # An overload name covers nothing else, whatever include_all_overloads says.
        ("aten::index.Tensor", (True, True, True)),
        ("aten::index.Tensor_out", (False, False, False)),
        ("aten::index", (False, False, False)),
        # Only the text before the first '.' is the base name.
        ("aten::add.Tensor.extra", (True, False, True)),
        ("aten::relu", (False, False, False)),
        ("relu", (False, False, False)),
    ],
)
def test_overloads_training_and_root(load: Load, name: str, expected: tuple[bool, ...]) -> None:
    assert answers(load(OVERLOADS), name) == expected


def test_include_all_operators_answers_yes_to_everything(load: Load) -> None:
    s = load(
        """\
        include_all_operators: true
        operators:
          aten::add: {is_root_operator: false, is_used_for_training: false}
        """
    )
    assert answers(s, "aten::add") == (True, True, True)
    assert answers(s, "aten::anything") == (True, True, True)
    assert s.is_kernel_dtype_selected("k", "Float")


def test_kernel_dtypes(load: Load) -> None:
    s = load(
        """\
        kernel_metadata:
          add_kernel: [Float, Int]
          mul_kernel: []
        """
    )
    assert s.kernel_metadata == {"add_kernel": ("Float", "Int"), "mul_kernel": ()}
    assert s.is_kernel_dtype_selected("add_kernel", "Int")
    assert not s.is_kernel_dtype_selected("add_kernel", "Half")
    assert not s.is_kernel_dtype_selected("mul_kernel", "Float")
    assert not s.is_kernel_dtype_selected("other_kernel", "Float")
    everything = load("include_all_non_op_selectives: true\nkernel_metadata: {k: [Int]}")
    assert everything.is_kernel_dtype_selected("other_kernel", "Float")
    assert not everything.is_operator_selected("aten::add")


def test_every_field_is_read(load: Load) -> None:
    s = load(
        """\
        debug_info: [model_a, 7]
        operators:
          aten::add.Tensor:
            name: aten::add.Tensor
            is_root_operator: false
            debug_info: [model_a]
        et_kernel_metadata:
          aten::add.out: ["v1/6;0,1|6;0,1"]
        custom_classes: [MyClass, MyClass, Other]
        build_features: [feature_x]
        """
    )
    assert s.debug_info == ("model_a", "7")
    assert s.operators == {
        "aten::add.Tensor": SelectedOperator(
            "aten::add.Tensor", is_root_operator=False, debug_info=("model_a",)
        )
    }
    assert s.et_kernel_metadata == {"aten::add.out": ("v1/6;0,1|6;0,1",)}
    assert s.custom_classes == {"MyClass", "Other"}
    assert s.build_features == {"feature_x"}
    assert s.warnings == ()


def test_empty_mapping_selects_nothing(load: Load) -> None:
    s = load("{}")
    assert answers(s, "aten::add") == (False, False, False)
    assert not s.is_kernel_dtype_selected("k", "Float")
    assert s.debug_info is None


def test_native_function_names(function_of: Callable[[str], NativeFunction]) -> None:
    add = function_of("- func: add.Tensor(Tensor self, Tensor other) -> Tensor")
    custom = function_of("- func: custom::frob(Tensor self) -> Tensor")
    assert op_name_from_native_function(add) == "aten::add.Tensor"
    assert op_name_from_native_function(custom) == "custom::frob"
    s = OperatorSelection.from_allowlist(["aten::add"])
    assert s.is_native_function_selected(add)
    assert not s.is_native_function_selected(custom)
    assert not s.is_native_function_selected_for_training(add)
    assert strip_operator_overload_name("aten::add.Tensor") == "aten::add"


def test_selection_is_immutable(load: Load) -> None:
    s = load("operators: {aten::add: {}}")
    with pytest.raises(FrozenInstanceError):
        s.include_all_operators = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.operators["aten::mul"] = SelectedOperator("aten::mul")  # type: ignore[index]
    assert hash(s) == hash(load("operators: {aten::add: {}}"))


# --- odd input that torchgen accepts: warnings ---------------------------------------------


def test_strings_and_mappings_where_lists_belong_are_read_as_torchgen_reads_them(
    load: Load, path: Path
) -> None:
    s = load(
        """\
        kernel_metadata:
          k: Float
          m: {Int: 1}
        custom_classes: ab
        operators:
          1: {}
        """
    )
    assert s.kernel_metadata == {"k": ("F", "l", "o", "a", "t"), "m": ("Int",)}
    assert s.custom_classes == {"a", "b"}
    assert s.operators == {}
    assert [str(w).replace(str(path), "$FILE") for w in s.warnings] == [
        "$FILE:2:6: warning: the dtypes of kernel tag 'k' should be a list; "
        "this string is read as its characters",
        "$FILE:3:6: warning: the dtypes of kernel tag 'm' should be a list; "
        "this mapping is read as its keys",
        "$FILE:4:17: warning: 'custom_classes' should be a list; "
        "this string is read as its characters",
        "$FILE:6:3: warning: operator name 1 is not a string; it selects nothing",
    ]


# --- errors -------------------------------------------------------------------------------


def test_missing_file_is_a_located_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(SpecError) as e:
        OperatorSelection.from_yaml_path(missing)
    assert str(e.value) == f"{missing}:1: error: no such file"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "",
            "$FILE:1: error: the selection file is empty; expected a mapping with keys "
            "such as 'operators' or 'include_all_operators'",
        ),
        (
            "- aten::add\n",
            "$FILE:1:1: error: the selection file is not a mapping; expected a mapping with "
            "keys such as 'operators' or 'include_all_operators'",
        ),
        (
            "operator: {}\n",
            "$FILE:1:1: error: unknown key 'operator' in the selection file; expected one of: "
            "build_features, custom_classes, debug_info, et_kernel_metadata, "
            "include_all_non_op_selectives, include_all_operators, kernel_metadata, operators",
        ),
        (
            "include_all_operators: 'true'\n",
            "$FILE:1:25: error: 'include_all_operators' must be true or false",
        ),
        (
            "include_all_non_op_selectives:\n",
            "$FILE:1:31: error: 'include_all_non_op_selectives' must be true or false",
        ),
        ("debug_info: model\n", "$FILE:1:13: error: 'debug_info' must be a list"),
        (
            "operators: [aten::add]\n",
            "$FILE:1:12: error: 'operators' must be a mapping from operator names to their "
            "settings",
        ),
        (
            "operators:\n  aten::add:\n",
            "$FILE:2:13: error: the settings of operator 'aten::add' must be a mapping "
            "({} for defaults)",
        ),
        (
            "operators:\n  aten::add:\n    overloads: all\n",
            "$FILE:3:5: error: unknown key 'overloads' for operator 'aten::add'; expected one "
            "of: debug_info, include_all_overloads, is_root_operator, is_used_for_training, "
            "name",
        ),
        (
            "operators:\n  aten::add:\n    name: aten::mul\n",
            "$FILE:3:11: error: 'name' must repeat the operator's key 'aten::add'",
        ),
        (
            "operators:\n  aten::add: {is_root_operator: 1}\n",
            "$FILE:2:33: error: 'is_root_operator' must be true or false",
        ),
        (
            "kernel_metadata: [add_kernel]\n",
            "$FILE:1:18: error: 'kernel_metadata' must be a mapping from kernel tags to lists "
            "of dtypes",
        ),
        (
            "kernel_metadata:\n  add_kernel: 3\n",
            "$FILE:2:15: error: the dtypes of kernel tag 'add_kernel' must be a list",
        ),
        (
            "et_kernel_metadata: x\n",
            "$FILE:1:21: error: 'et_kernel_metadata' must be a mapping from operator names to "
            "kernel keys",
        ),
        ("custom_classes: 3\n", "$FILE:1:17: error: 'custom_classes' must be a list"),
        (
            "build_features: [[a]]\n",
            "$FILE:1:17: error: the items of 'build_features' must be scalars, not lists or "
            "mappings",
        ),
        (
            "operators:\n  aten::add: {}\n  aten::add: {}\n",
            "$FILE:3:3: error: duplicate key 'aten::add' (first given on line 2)",
        ),
    ],
)
def test_bad_selection_files(error_of: Callable[[str], str], text: str, expected: str) -> None:
    assert error_of(text) == expected


def test_every_error_of_a_file_is_reported(error_of: Callable[[str], str]) -> None:
    assert error_of(
        """\
        include_all_operators: 1
        operators:
          aten::add: {is_used_for_training: no, include_all_overloads: maybe}
          aten::mul: {name: aten::div, extra: 1}
        custom_classes: null
        """
    ) == "\n".join(
        [
            "$FILE:1:24: error: 'include_all_operators' must be true or false",
            "$FILE:3:64: error: 'include_all_overloads' must be true or false",
            "$FILE:4:21: error: 'name' must repeat the operator's key 'aten::mul'",
            "$FILE:4:32: error: unknown key 'extra' for operator 'aten::mul'; expected one of: "
            "debug_info, include_all_overloads, is_root_operator, is_used_for_training, name",
            "$FILE:5:17: error: 'custom_classes' must be a list",
        ]
    )
