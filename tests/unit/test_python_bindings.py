"""Python bindings, one name at a time: the exact C++ of a binding for a spec snippet.

Each case is a small spec and what opgen renders for one of its names (upstream's
gen_python_functions renders the same; tests/conformance/test_python_bindings.py
checks every file on torch's spec).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from opgen.api.signatures import SignatureSet
from opgen.diagnostics import SpecError
from opgen.python_bindings.bound import (
    is_py_torch_function,
    is_py_variable_method,
    should_generate_py_binding,
)
from opgen.python_bindings.overloads import Pair, group_by_name, group_overloads, load_signatures
from opgen.spec import Spec
from opgen.spec.deprecated import DeprecatedSignature, load_deprecated_signatures
from opgen.spec.schema import BaseOperatorName
from opgen.targets.python.method_impl import forward_decls, method_def, method_impl

SpecOf = Callable[[str], Spec]


def overloads(
    spec: Spec, name: str, *, method: bool, deprecated: Sequence[DeprecatedSignature] = ()
) -> tuple[BaseOperatorName, list[Pair], SignatureSet]:
    signatures = SignatureSet()
    functions = [f for f in spec.functions if should_generate_py_binding(f)]
    pairs = load_signatures(functions, deprecated, signatures, method=method)
    grouped = group_by_name(pairs, is_py_variable_method if method else is_py_torch_function)
    (key,) = [k for k in grouped if str(k) == name]
    return key, grouped[key], signatures


def binding(
    spec: Spec, name: str, *, method: bool, deprecated: Sequence[DeprecatedSignature] = ()
) -> str:
    key, pairs, signatures = overloads(spec, name, method=method, deprecated=deprecated)
    return method_impl(key, None if method else "torch", pairs, signatures, method=method)


ABS = """\
- func: abs(Tensor self) -> Tensor
  variants: function, method

- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
"""


def test_a_method_without_arguments_has_no_parser(spec_of: SpecOf) -> None:
    spec = spec_of(ABS)
    assert binding(spec, "abs", method=True) == (
        "// abs\n"
        "static PyObject * THPVariable_abs(PyObject* self_, PyObject* args)\n"
        "{\n"
        "  HANDLE_TH_ERRORS\n"
        "  const Tensor& self = THPVariable_Unpack(self_);\n"
        "  if (has_torch_function(self_)) {\n"
        '    return handle_torch_function(self_, "abs");\n'
        "  }\n"
        "  // aten::abs(Tensor self) -> Tensor\n"
        "\n"
        "  auto dispatch_abs = [](const at::Tensor & self) -> at::Tensor {\n"
        "    pybind11::gil_scoped_release no_gil;\n"
        "    return self.abs();\n"
        "  };\n"
        "  return wrap(dispatch_abs(self));\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )
    key, pairs, _ = overloads(spec, "abs", method=True)
    assert method_def(key, None, pairs, method=True) == (
        '{"abs", THPVariable_abs, METH_NOARGS, nullptr},'
    )
    assert forward_decls(key, pairs, method=True) == []


def test_a_function_and_its_out_variant_parse_as_one_signature(spec_of: SpecOf) -> None:
    spec = spec_of(ABS)
    assert binding(spec, "abs", method=False) == (
        "// abs\n"
        "static PyObject * THPVariable_abs(PyObject* self_, PyObject* args, PyObject* kwargs)\n"
        "{\n"
        "  HANDLE_TH_ERRORS\n"
        "  static PythonArgParser parser({\n"
        '    "abs(Tensor input, *, Tensor out=None)",\n'
        "  }, /*traceable=*/true);\n"
        "\n"
        "  ParsedArgs<2> parsed_args;\n"
        "  auto _r = parser.parse(nullptr, args, kwargs, parsed_args);\n"
        "  if(_r.has_torch_function()) {\n"
        "    return handle_torch_function(_r, nullptr, args, kwargs, "
        'THPVariableFunctionsModule, "torch");\n'
        "  }\n"
        "  if (_r.isNone(1)) {\n"
        "    // aten::abs(Tensor self) -> Tensor\n"
        "\n"
        "    auto dispatch_abs = [](const at::Tensor & self) -> at::Tensor {\n"
        "      pybind11::gil_scoped_release no_gil;\n"
        "      return self.abs();\n"
        "    };\n"
        "    return wrap(dispatch_abs(_r.tensor(0)));\n"
        "  } else {\n"
        "    // aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
        "\n"
        "    auto dispatch_abs_out = [](at::Tensor out, const at::Tensor & self) -> at::Tensor {\n"
        "      pybind11::gil_scoped_release no_gil;\n"
        "      return at::abs_out(out, self);\n"
        "    };\n"
        "    return wrap(dispatch_abs_out(_r.tensor(1), _r.tensor(0)));\n"
        "  }\n"
        "  Py_RETURN_NONE;\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )
    key, pairs, _ = overloads(spec, "abs", method=False)
    assert method_def(key, "torch", pairs, method=False) == (
        '{"abs", castPyCFunctionWithKeywords(THPVariable_abs), '
        "METH_VARARGS | METH_KEYWORDS | METH_STATIC, nullptr},"
    )
    assert forward_decls(key, pairs, method=False) == [
        "static PyObject * THPVariable_abs(PyObject* self_, PyObject* args, PyObject* kwargs);\n"
    ]


AND = """\
- func: __and__.Scalar(Tensor self, Scalar other) -> Tensor
  variants: method, function

- func: __and__.Tensor(Tensor self, Tensor other) -> Tensor
  variants: method, function
"""


def test_a_dunder_method_tries_tensor_before_scalar_and_returns_not_implemented(
    spec_of: SpecOf,
) -> None:
    spec = spec_of(AND)
    text = binding(spec, "__and__", method=True)
    # Several overloads: a switch, and upstream's template opens with a lone backslash.
    assert text.startswith("\\\n// __and__\n")
    assert '    "__and__(Tensor other)",\n    "__and__(Scalar other)",\n' in text
    assert "    case 0: {\n      // aten::__and__.Tensor(Tensor self, Tensor other)" in text
    assert "      return wrap(dispatch___and__(self, _r.scalar(0)));\n    }\n  }\n" in text
    key, pairs, _ = overloads(spec, "__and__", method=True)
    assert method_def(key, None, pairs, method=True) == (
        '{"__and__", castPyCFunctionWithKeywords(TypeError_to_NotImplemented_<'
        "THPVariable___and__>), METH_VARARGS | METH_KEYWORDS, nullptr},"
    )


def test_named_returns_are_a_structseq(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: max.dim(Tensor self, int dim, bool keepdim=False) -> "
        "(Tensor values, Tensor indices)\n"
        "  variants: function, method\n"
    )
    text = binding(spec, "max", method=True)
    assert text.startswith(
        "// max\n"
        "static PyObject * THPVariable_max(PyObject* self_, PyObject* args, PyObject* kwargs)\n"
        "{\n"
        "  HANDLE_TH_ERRORS\n"
        "  static PyTypeObject* NamedTuple = generated::get_max_structseq();\n"
        "  const Tensor& self = THPVariable_Unpack(self_);\n"
    )
    assert (
        "  auto dispatch_max = [](const at::Tensor & self, int64_t dim, bool keepdim) -> "
        "::std::tuple<at::Tensor,at::Tensor> {\n"
    ) in text
    assert "  return wrap(NamedTuple, dispatch_max(self, _r.toInt64(0), _r.toBool(1)));\n" in text


ZEROS = """\
- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros

- func: zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
"""  # noqa: E501


def test_a_factory_packs_tensor_options_and_its_out_variant_checks_them(
    spec_of: SpecOf,
) -> None:
    text = binding(spec_of(ZEROS), "zeros", method=False)
    assert (
        '    "zeros(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, '
        "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
        'bool? requires_grad=False)",\n'
    ) in text
    assert text.split("  if (_r.isNone(1)) {\n", 1)[1] == (
        "    // aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor\n"
        "    const auto options = TensorOptions()\n"
        "        .dtype(_r.scalartypeOptional(2))\n"
        "        .device(_r.deviceWithDefault(4, torch::tensors::get_default_device()))\n"
        "        .layout(_r.layoutOptional(3))\n"
        "        .requires_grad(_r.toBool(6))\n"
        "        .pinned_memory(_r.toBool(5));\n"
        "    torch::utils::maybe_initialize_device(options);\n"
        "\n"
        "    auto dispatch_zeros = [](c10::SymIntArrayRef size, at::TensorOptions options) "
        "-> at::Tensor {\n"
        "      pybind11::gil_scoped_release no_gil;\n"
        "      return torch::zeros_symint(size, options);\n"
        "    };\n"
        "    return wrap(dispatch_zeros(_r.symintlist(0), options));\n"
        "  } else {\n"
        "    // aten::zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)\n"
        "    check_out_type_matches(_r.tensor(1), _r.scalartypeOptional(2),\n"
        "                           _r.isNone(2), _r.layoutOptional(3),\n"
        "                           _r.deviceWithDefault(4, torch::tensors::get_default_device())"
        ", _r.isNone(4));\n"
        "\n"
        "    auto dispatch_zeros_out = [](at::Tensor out, c10::SymIntArrayRef size) "
        "-> at::Tensor {\n"
        "      pybind11::gil_scoped_release no_gil;\n"
        "      return at::zeros_symint_out(out, size);\n"
        "    };\n"
        "    return wrap(dispatch_zeros_out(_r.tensor(1), _r.symintlist(0))"
        ".set_requires_grad(_r.toBool(6)));\n"
        "  }\n"
        "  Py_RETURN_NONE;\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )


def test_a_deprecated_signature_calls_in_its_own_order_with_its_constants(
    spec_of: SpecOf, tmp_path: Path
) -> None:
    spec = spec_of(
        "- func: addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
        "Scalar alpha=1) -> Tensor\n"
        "  variants: function, method\n"
    )
    path = tmp_path / "deprecated.yaml"
    path.write_text(
        "- name: addmm(Scalar beta, Tensor self, Tensor mat1, Tensor mat2) -> Tensor\n"
        "  aten: addmm(self, mat1, mat2, beta, 1)\n"
    )
    deprecated = load_deprecated_signatures(str(path))
    text = binding(spec, "addmm", method=True, deprecated=deprecated)
    assert (
        '    "addmm(Scalar beta, Tensor mat1, Tensor mat2)|deprecated",\n'
        '    "addmm(Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)",\n'
    ) in text
    assert (
        "    case 0: {\n"
        "      // [deprecated] aten::addmm(Scalar beta, Tensor self, Tensor mat1, Tensor mat2)"
        " -> Tensor\n"
        "\n"
        "      auto dispatch_addmm = [](const at::Scalar & beta, const at::Tensor & self, "
        "const at::Tensor & mat1, const at::Tensor & mat2) -> at::Tensor {\n"
        "        pybind11::gil_scoped_release no_gil;\n"
        "        return self.addmm(mat1, mat2, beta, 1);\n"
        "      };\n"
        "      return wrap(dispatch_addmm(_r.scalar(0), self, _r.tensor(1), _r.tensor(2)));\n"
        "    }\n"
    ) in text


def test_an_inplace_foreach_function_returns_its_self_list(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: _foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()\n"
        "  variants: function\n"
        "  device_check: NoCheck\n"
    )
    text = binding(spec, "_foreach_add_", method=False)
    assert "  }, /*traceable=*/false);\n" in text  # returns no tensor: not traced
    assert text.endswith(
        "  dispatch__foreach_add_(_r.tensorlist(0), _r.scalar(1));\n"
        "  PyObject* self_tensorlist = _r.args[0];\n"
        "  Py_INCREF(self_tensorlist);\n"
        "  return self_tensorlist;\n"
        "  Py_RETURN_NONE;\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )


def test_overloads_sort_by_text_then_narrower_types_first(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor\n"
        "- func: roll.int(Tensor self, int shifts) -> Tensor\n"
        "- func: roll.Tensor(Tensor self, Tensor shifts) -> Tensor\n"
        "- func: roll.Scalar(Tensor self, Scalar shifts) -> Tensor\n"
        "- func: roll.list(Tensor self, int[] shifts) -> Tensor\n"
        "- func: roll.tensors(Tensor self, Tensor[] shifts) -> Tensor\n"
    )
    _, pairs, _ = overloads(spec, "roll", method=False)
    assert [g.signature.signature_str() for g in group_overloads(pairs)] == [
        # A number parses as a Tensor, and an int list as a Tensor list (which throws).
        "roll(Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)",
        "roll(Tensor input, Tensor shifts)",
        "roll(Tensor input, Scalar shifts)",
        "roll(Tensor input, int64_t shifts)",
        "roll(Tensor input, IntArrayRef shifts)",
        "roll(Tensor input, TensorList shifts)",
    ]


# -- errors ------------------------------------------------------------------------


def _error(spec: Spec, name: str) -> SpecError:
    key, pairs, signatures = overloads(spec, name, method=False)
    with pytest.raises(SpecError) as raised:
        method_impl(key, "torch", pairs, signatures, method=False)
    return raised.value


def test_two_overloads_with_one_python_signature_are_an_error(spec_of: SpecOf) -> None:
    # Python signatures have no returns.
    spec = spec_of(
        "- func: foo(Tensor self, int dim) -> Tensor\n"
        "- func: foo.two(Tensor self, int dim) -> (Tensor, Tensor)\n"
    )
    error = _error(spec, "foo")
    assert error.message == (
        "'foo.two' has the same Python signature as 'foo': foo(Tensor input, int64_t dim)"
    )
    assert str(error.location).endswith("native_functions.yaml:2:9")


def test_an_out_variant_without_its_functional_variant_is_an_error(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: foo(Tensor self) -> Tensor\n"
        "- func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n"
    )
    error = _error(spec, "foo")
    assert error.message == (
        "the out= overload 'foo.out' has no functional overload with the same Python "
        "signature, foo(Tensor input, int64_t dim); the functional ones are:\n"
        "- foo(Tensor input)"
    )


def test_a_return_type_wrap_cannot_convert_is_an_error(spec_of: SpecOf) -> None:
    error = _error(spec_of("- func: foo(Tensor self) -> str\n"), "foo")
    assert error.message == (
        "no Python binding for foo: foo returns c10::string_view, which the Python "
        "bindings cannot wrap"
    )


def test_an_argument_the_parser_cannot_read_is_an_error(spec_of: SpecOf) -> None:
    error = _error(spec_of("- func: foo(Tensor self, bool[3] mask) -> Tensor\n"), "foo")
    assert error.message == (
        "no Python binding for foo: the Python argument parser cannot read an argument of "
        "type 'bool[3]'"
    )
    location = error.location
    assert location is not None  # the argument, `bool[3] mask`
    assert (location.line, location.col, location.length) == (1, 26, len("bool[3] mask"))
