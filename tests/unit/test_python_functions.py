"""The Python classes of the backward nodes (python_functions.cpp), from hand-built infos.

A node's Python type has a property per saved value Python can read: the
default properties of every node, then `_saved_<name>` (and, for values held
in SavedVariables, `_raw_saved_<name>`), in the order the node saves them.
Each test builds the info of a node saving a few values and checks the text
the node contributes to the file's two lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from opgen.api.types import (
    INT_ARRAY_REF,
    SCALAR,
    SCALAR_TYPE,
    TENSOR,
    TENSOR_LIST,
    ArrayRefCType,
    BaseCType,
    CType,
    NamedCType,
    OptionalCType,
)
from opgen.autograd.model import DifferentiabilityInfo, SavedAttribute
from opgen.spec.native import NativeFunction
from opgen.targets.python.python_functions import node_fragments

FunctionOf = Callable[[str], NativeFunction]


@pytest.fixture
def mul(function_of: FunctionOf) -> NativeFunction:
    return function_of("- func: mul.Tensor(Tensor self, Tensor other) -> Tensor")


def info_saving(
    f: NativeFunction,
    inputs: Sequence[tuple[str, CType]],
    outputs: Sequence[tuple[str, CType]] = (),
) -> DifferentiabilityInfo:
    """The info of node `MulBackward0`, saving these inputs and outputs (no formulas: the
    Python class depends on the saved values only)."""

    def saved(values: Sequence[tuple[str, CType]]) -> tuple[SavedAttribute, ...]:
        return tuple(SavedAttribute(NamedCType(name, t), name) for name, t in values)

    return DifferentiabilityInfo(
        name="mul",
        func=f,
        op="MulBackward0",
        derivatives=(),
        forward_derivatives=(),
        all_saved_inputs=saved(inputs),
        all_saved_outputs=saved(outputs),
        available_named_gradients=(),
        used_named_gradients=frozenset(),
        args_with_derivatives=(),
        non_differentiable_arg_names=(),
        output_differentiability=None,
        output_differentiability_conditions=None,
    )


def props_and_getters(info: DifferentiabilityInfo) -> str:
    (text,) = node_fragments(info)["py_function_props_and_getters"]
    return text


def property_table(info: DifferentiabilityInfo) -> list[str]:
    """The lines of the node's PyGetSetDef table."""
    text = props_and_getters(info)
    start = text.index("static struct PyGetSetDef")
    return text[start:].splitlines()


def test_the_node_registers_its_class_with_its_properties(mul: NativeFunction) -> None:
    assert node_fragments(info_saving(mul, []))["py_function_initializers"] == [
        "static PyTypeObject MulBackward0Class;\n"
        'addClass<MulBackward0>(module, MulBackward0Class, "MulBackward0", '
        "MulBackward0_properties);"
    ]


def test_a_saved_tensor_has_a_value_and_a_raw_property(mul: NativeFunction) -> None:
    assert props_and_getters(info_saving(mul, [("other", TENSOR)])) == (
        "static PyObject* THPMulBackward0_other_getter(THPCppFunction *self, void *_unused) {\n"
        "  HANDLE_TH_ERRORS\n"
        "  const auto& prop = static_cast<MulBackward0*>(self->cdata.get())->other_;\n"
        "  return THPVariable_Wrap(prop.unpack(self->cdata));\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
        "static PyObject* THPMulBackward0_other_raw_getter(THPCppFunction *self, void *_unused) {\n"
        "  HANDLE_TH_ERRORS\n"
        "  const auto& prop = static_cast<MulBackward0*>(self->cdata.get())->other_;\n"
        "  pybind11::object obj = "
        "pybind11::cast(prop, pybind11::return_value_policy::reference);\n"
        "  return obj.release().ptr();\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
        "static struct PyGetSetDef MulBackward0_properties[] = {\n"
        "  THP_FUNCTION_DEFAULT_PROPERTIES,\n"
        '  {(char*)"_saved_other", (getter)THPMulBackward0_other_getter, '
        "nullptr, nullptr, nullptr},\n"
        '  {(char*)"_raw_saved_other", (getter)THPMulBackward0_other_raw_getter, '
        "nullptr, nullptr, nullptr},\n"
        "  {nullptr} /* sentinel */\n"
        "};\n"
        "\n"
    )


def test_properties_follow_the_saved_order_inputs_then_outputs(mul: NativeFunction) -> None:
    info = info_saving(
        mul,
        [("self", TENSOR), ("alpha", SCALAR)],
        [("result", TENSOR), ("count", OptionalCType(BaseCType("int64_t")))],
    )
    names = [line.split('"')[1] for line in property_table(info) if '(char*)"' in line]
    assert names == [
        "_saved_alpha",
        "_saved_self",
        "_raw_saved_self",
        "_saved_count",
        "_saved_result",
        "_raw_saved_result",
    ]


def test_values_python_cannot_read_have_no_property(mul: NativeFunction) -> None:
    # Without any getter, the getters' line and the table's line both stay, empty.
    assert props_and_getters(info_saving(mul, [("self_scalar_type", SCALAR_TYPE)])) == (
        "\n"
        "\n"
        "static struct PyGetSetDef MulBackward0_properties[] = {\n"
        "  THP_FUNCTION_DEFAULT_PROPERTIES,\n"
        "\n"
        "  {nullptr} /* sentinel */\n"
        "};\n"
        "\n"
    )


def test_optional_values_read_as_none_when_empty(mul: NativeFunction) -> None:
    text = props_and_getters(info_saving(mul, [("dim", OptionalCType(BaseCType("int64_t")))]))
    assert (
        "  auto opt_prop = static_cast<MulBackward0*>(self->cdata.get())->dim;\n"
        "  if (!opt_prop.has_value()) {\n"
        "    Py_RETURN_NONE;\n"
        "  }\n"
        "  auto prop = opt_prop.value();\n"
        "  return PyLong_FromUnsignedLong((int64_t) prop);\n"
    ) in text


def test_released_lists_fail_once_freed(mul: NativeFunction) -> None:
    # Tensor lists are held in `<name>_`, scalar lists in `<name>`; both have `<name>_released_`.
    tensors = props_and_getters(info_saving(mul, [("tensors", TENSOR_LIST)]))
    scalars = props_and_getters(info_saving(mul, [("scalars", ArrayRefCType(SCALAR))]))
    assert "  const auto& prop = node->tensors_;\n  if (node->tensors_released_) {\n" in tensors
    assert "_raw_saved_tensors" in tensors
    assert "  const auto& prop = node->scalars;\n  if (node->scalars_released_) {\n" in scalars
    assert "_raw_saved_scalars" not in scalars


def test_array_refs_become_tuples(mul: NativeFunction) -> None:
    text = props_and_getters(info_saving(mul, [("sizes", INT_ARRAY_REF)]))
    assert (
        "  auto prop = static_cast<MulBackward0*>(self->cdata.get())->sizes;\n"
        "  PyObject* tup = PyTuple_New((Py_ssize_t) prop.size());\n"
        "  for (auto i : c10::irange(prop.size())) {\n"
        "    PyTuple_SetItem(tup, (Py_ssize_t) i, PyLong_FromUnsignedLong((uint64_t) prop[i]));\n"
        "  }\n"
        "  return tup;\n"
    ) in text
