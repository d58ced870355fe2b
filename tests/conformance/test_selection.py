"""`opgen.spec.selection` against torchgen's `SelectiveBuilder`, live, on torch's packaged spec.

For several selection YAMLs and allowlists, every answer opgen's `OperatorSelection` gives
for every function of torch's spec (matched to torchgen's by name), for each function's
base name and for a few names the spec lacks, must equal torchgen's; so must the data read
from the file. `from_flags` must make the selection `get_custom_build_selector` makes, and
a selection file must be rejected by opgen exactly when torchgen rejects it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from torchgen.gen import get_custom_build_selector
from torchgen.selective_build.selector import SelectiveBuilder, op_name_from_native_function

from opgen.diagnostics import SpecError
from opgen.spec.selection import OperatorSelection, strip_operator_overload_name
from opgen.spec.selection import op_name_from_native_function as our_op_name

from .live_specs import LiveSpecs, live_specs

HAND_WRITTEN = {
    "overloads": """
operators:
  aten::add:
    is_used_for_training: false
    include_all_overloads: true
  aten::add.Tensor:
    is_root_operator: false
    is_used_for_training: true
    include_all_overloads: false
  aten::mul:
    include_all_overloads: false
  aten::mul.Scalar: {}
  aten::relu: {include_all_overloads: false, is_used_for_training: false}
  aten::div: {is_root_operator: false}
  aten::div.Tensor_mode: {is_used_for_training: false, is_root_operator: true}
  aten::sum: {is_root_operator: false, is_used_for_training: false}
  aten::index.Tensor: {include_all_overloads: true}
  aten::_foreach_add: {debug_info: [model_a]}
  aten::conv2d: {name: aten::conv2d, debug_info: [model_a, model_b]}
  aten::copy_: {include_all_overloads: false, is_root_operator: false}
  aten::does_not_exist: {}
  add: {}
kernel_metadata:
  add_kernel: [Float, Int]
  mul_kernel: []
debug_info: [model_a, model_b]
""",
    "no_overloads": """
operators:
  aten::add: {include_all_overloads: false}
  aten::add.Tensor: {include_all_overloads: false, is_used_for_training: false}
  aten::mul.out: {include_all_overloads: false, is_root_operator: false}
  aten::relu: {include_all_overloads: false}
  aten::relu_: {include_all_overloads: false, is_root_operator: false}
custom_classes: [MyClass]
build_features: [feature_x]
""",
    "include_all_operators": """
include_all_operators: true
operators:
  aten::add: {is_root_operator: false, is_used_for_training: false}
kernel_metadata: {add_kernel: [Float]}
""",
    "non_op_selectives": """
include_all_non_op_selectives: true
operators:
  aten::sub: {is_used_for_training: false}
et_kernel_metadata:
  aten::sub.out: ["v1/6;0,1|6;0,1"]
""",
    "empty": "{}\n",
}
KERNEL_TAGS = ["add_kernel", "mul_kernel", "other_kernel"]
DTYPES = ["Float", "Int", "Half"]
# Names the spec lacks; two dots check that only the text before the first is the base name.
UNKNOWN_NAMES = ["aten::does_not_exist", "aten::does_not_exist.x", "add", "", "aten::"]
UNKNOWN_NAMES += ["aten::add.Tensor.x", "aten::index.Tensor.x", "aten::div.Tensor_mode.x"]


@pytest.fixture(scope="module")
def specs(torchgen_native_dir: Path) -> LiveSpecs:
    return live_specs(torchgen_native_dir)


@pytest.fixture(scope="module")
def functions(specs: LiveSpecs) -> dict[str, tuple[Any, Any]]:
    """opgen's and torchgen's function of each name."""
    ours = {str(f.func.name): f for f in specs.ours.functions}
    theirs = {str(f.func.name): f for f in specs.theirs.native_functions}
    assert sorted(ours) == sorted(theirs)
    return {name: (f, theirs[name]) for name, f in ours.items()}


def sampled_yaml(names: list[str]) -> str:
    """Every fifth operator, by base name or full name, with flags varying by position."""

    def flag(value: bool) -> str:
        return "true" if value else "false"

    entries: dict[str, str] = {}
    for i, name in enumerate(sorted(names)[::5]):
        key = f"aten::{name}" if i % 3 else f"aten::{strip_operator_overload_name(name)}"
        entries.setdefault(
            key,
            f"  {key}: {{include_all_overloads: {flag(i % 2 == 0)}, "
            f"is_root_operator: {flag(i % 4 < 2)}, is_used_for_training: {flag(i % 7 < 4)}}}",
        )
    return "operators:\n" + "\n".join(entries.values()) + "\n"


def sampled_allowlist(names: list[str]) -> list[str]:
    """Every seventh operator by base name and every eleventh by full name."""
    ordered = sorted(names)
    bases = [f"aten::{strip_operator_overload_name(n)}" for n in ordered[::7]]
    return bases + [f"aten::{n}" for n in ordered[3::11]]


def answers(s: OperatorSelection | SelectiveBuilder, name: str) -> tuple[bool, bool, bool]:
    """(selected, selected for training, root operator), asked of either implementation."""
    return (
        s.is_operator_selected(name),
        s.is_operator_selected_for_training(name),
        s.is_root_operator(name),
    )


def compare_answers(
    ours: OperatorSelection, theirs: SelectiveBuilder, functions: dict[str, tuple[Any, Any]]
) -> None:
    assert ours.include_all_operators == theirs.include_all_operators
    mismatches: list[tuple[str, object, object]] = []
    names: set[str] = set(UNKNOWN_NAMES)
    for name, (o, t) in functions.items():
        assert our_op_name(o) == op_name_from_native_function(t)
        by_function = (
            ours.is_native_function_selected(o),
            ours.is_native_function_selected_for_training(o),
        )
        upstream_by_function = (
            theirs.is_native_function_selected(t),
            theirs.is_native_function_selected_for_training(t),
        )
        if by_function != upstream_by_function:
            mismatches.append((name, by_function, upstream_by_function))
        full = op_name_from_native_function(t)
        names.update((full, strip_operator_overload_name(full)))
    for name in sorted(names):
        mine, upstream = answers(ours, name), answers(theirs, name)
        if mine != upstream:
            mismatches.append((name, mine, upstream))
    for tag in KERNEL_TAGS:
        for dtype in DTYPES:
            kept = ours.is_kernel_dtype_selected(tag, dtype)
            if kept != theirs.is_kernel_dtype_selected(tag, dtype):
                mismatches.append((f"{tag}/{dtype}", kept, not kept))
    assert mismatches == []


def _plain(value: Any) -> Any:
    """Lists as tuples and mappings as dicts, to compare torchgen's data with opgen's."""
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    return value


def operator_record(op: Any, debug_info: tuple[str, ...] | None) -> tuple[object, ...]:
    flags = (op.is_root_operator, op.is_used_for_training, op.include_all_overloads)
    return (op.name, *flags, debug_info)


def theirs_data(s: SelectiveBuilder) -> dict[str, Any]:
    return {
        "include_all_operators": s.include_all_operators,
        "include_all_non_op_selectives": s.include_all_non_op_selectives,
        "operators": {
            name: operator_record(op, op._debug_info)
            for name, op in s.operators.items()
            if isinstance(name, str)  # opgen drops names that can match nothing
        },
        "kernel_metadata": _plain(s.kernel_metadata),
        "et_kernel_metadata": _plain(s.et_kernel_metadata),
        "custom_classes": set(s.custom_classes),
        "build_features": set(s.build_features),
        "debug_info": s._debug_info,
    }


def ours_data(s: OperatorSelection) -> dict[str, Any]:
    return {
        "include_all_operators": s.include_all_operators,
        "include_all_non_op_selectives": s.include_all_non_op_selectives,
        "operators": {name: operator_record(op, op.debug_info) for name, op in s.operators.items()},
        "kernel_metadata": _plain(s.kernel_metadata),
        "et_kernel_metadata": _plain(s.et_kernel_metadata),
        "custom_classes": set(s.custom_classes),
        "build_features": set(s.build_features),
        "debug_info": s.debug_info,
    }


def selection_files(tmp_path: Path, functions: Iterable[str]) -> dict[str, Path]:
    texts = dict(HAND_WRITTEN, sampled=sampled_yaml(list(functions)))
    paths = {}
    for name, text in texts.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(text)
    return paths


@pytest.mark.parametrize("which", [*HAND_WRITTEN, "sampled"])
def test_selection_yaml(which: str, tmp_path: Path, functions: dict[str, tuple[Any, Any]]) -> None:
    path = str(selection_files(tmp_path, functions)[which])
    ours = OperatorSelection.from_yaml_path(path)
    theirs = SelectiveBuilder.from_yaml_path(path)
    assert ours_data(ours) == theirs_data(theirs)
    assert ours.warnings == ()
    compare_answers(ours, theirs, functions)
    if which == "sampled":  # the sample must exercise every kind of answer
        kinds = {answers(ours, op_name_from_native_function(t)) for _, t in functions.values()}
        assert len(kinds) == 5  # training and root imply selected


@pytest.mark.parametrize(
    "allowlist",
    [["aten::add", "aten::mul.Tensor", "aten::relu", "relu"], [], "sampled"],
    ids=["hand_written", "empty", "sampled"],
)
def test_allowlist(allowlist: Any, functions: dict[str, tuple[Any, Any]]) -> None:
    names = sampled_allowlist(list(functions)) if allowlist == "sampled" else allowlist
    ours = OperatorSelection.from_allowlist(names)
    theirs = SelectiveBuilder.from_legacy_op_registration_allow_list(set(names), True, False)
    assert ours_data(ours) == theirs_data(theirs)
    compare_answers(ours, theirs, functions)


def test_everything(functions: dict[str, tuple[Any, Any]]) -> None:
    ours, theirs = OperatorSelection.everything(), SelectiveBuilder.get_nop_selector()
    assert ours_data(ours) == theirs_data(theirs)
    compare_answers(ours, theirs, functions)


def test_from_flags_is_get_custom_build_selector(
    tmp_path: Path, functions: dict[str, tuple[Any, Any]]
) -> None:
    path = str(selection_files(tmp_path, functions)["overloads"])
    flags: list[tuple[list[str] | None, str | None]] = [
        (None, None),
        (["aten::add", "aten::mul.Tensor"], None),
        ([], None),
        (None, path),
    ]
    for allowlist, yaml_path in flags:
        ours = OperatorSelection.from_flags(allowlist, yaml_path)
        theirs = get_custom_build_selector(allowlist, yaml_path)
        assert ours_data(ours) == theirs_data(theirs)
        compare_answers(ours, theirs, functions)
    with pytest.raises(AssertionError):
        get_custom_build_selector(["aten::add"], path)
    with pytest.raises(ValueError):
        OperatorSelection.from_flags(["aten::add"], path)


ACCEPTED = [
    "{}",
    "include_all_operators: yes",
    "operators: {aten::add: {}}",
    "operators: {aten::add: {name: aten::add, debug_info: [1, x]}}",
    "operators: {1: {name: 1.0}}",
    "operators: {aten::add: {}, null: {}}",
    "kernel_metadata: {k: Float}",
    "kernel_metadata: {k: {Float: 1, Int: 2}}",
    "kernel_metadata: {1: [2, true, null, 1.5, [a], {b: c}]}",
    "custom_classes: abc",
    "custom_classes: {a: 1, b: 2}",
    "build_features: [x, 1, true, null]",
    "debug_info: [1, a, [b]]",
    "et_kernel_metadata: {aten::add: [v1], 3: {x: [y]}}",
    "include_all_non_op_selectives: on",
]
REJECTED = [
    "",
    "[]",
    "hello",
    "unknown: 1",
    "include_all_operators: 1",
    "include_all_operators: null",
    "include_all_operators: 'true'",
    "operators: []",
    "operators: null",
    "operators: {aten::add: null}",
    "operators: {aten::add: []}",
    "operators: {aten::add: x}",
    "operators: {aten::add: {bogus: 1}}",
    "operators: {aten::add: {name: aten::mul}}",
    "operators: {1: {name: '1'}}",
    "operators: {aten::add: {is_root_operator: 1}}",
    "operators: {aten::add: {is_used_for_training: 'no'}}",
    "operators: {aten::add: {include_all_overloads: null}}",
    "operators: {aten::add: {debug_info: x}}",
    "debug_info: x",
    "debug_info: null",
    "kernel_metadata: []",
    "kernel_metadata: {k: 1}",
    "kernel_metadata: {k: null}",
    "et_kernel_metadata: []",
    "et_kernel_metadata: null",
    "custom_classes: 1",
    "custom_classes: null",
    "custom_classes: [[a]]",
    "build_features: [{a: 1}]",
    "build_features: true",
    "include_all_non_op_selectives: 0",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_both_accept(text: str) -> None:
    ours = OperatorSelection.from_yaml_text(text)
    theirs = SelectiveBuilder.from_yaml_str(text)
    assert ours_data(ours) == theirs_data(theirs)


@pytest.mark.parametrize("text", REJECTED)
def test_both_reject(text: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - torchgen raises several types
        SelectiveBuilder.from_yaml_str(text)
    with pytest.raises(SpecError):
        OperatorSelection.from_yaml_text(text)
