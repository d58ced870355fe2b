"""Bound MLX functions: a Python signature bound straight to existing C++, in and out.

A bound entry of the MLX dialect (`spec/mlx/bound_entry.py`) is read from a small
spec snippet into its exact model; `targets/mlx/bound.py` makes it the exact
`m.def(...)` statement, `targets/mlx/stubs.py` the exact stub, and `opgen check
--mlx` counts it. Malformed entries and their exact diagnostics are the `bound_*`
cases of `tests/malformed_mlx/` (test_malformed_mlx.py); examples/mlx_core builds
and runs what these shapes of code become.
"""

from __future__ import annotations

import ast
import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.spec.mlx.model import (
    BoundOverload,
    CallArgument,
    MlxFunction,
    MlxLibrary,
    ParameterKind,
)
from opgen.spec.mlx.python_types import Leaf, dtype_name
from opgen.spec.mlx.reader import load_mlx_library
from opgen.targets.mlx.bound import definitions, support
from opgen.targets.mlx.stubs import stub

NAMESPACE = "mlx::core"


def read(tmp_path: Path, entries: str, namespace: str = NAMESPACE) -> MlxLibrary:
    """The library of `entries` (YAML, dedented), after a `namespace:` entry."""
    path = tmp_path / "spec.yaml"
    text = f"- namespace: {namespace}\n" + textwrap.dedent(entries)
    path.write_text(text, encoding="utf-8")
    return load_mlx_library(str(path), derivatives=None)


def function(tmp_path: Path, entry: str) -> MlxFunction:
    (bound,) = read(tmp_path, entry).functions
    return bound


def overload(tmp_path: Path, entry: str) -> BoundOverload:
    (only,) = function(tmp_path, entry).overloads
    return only


def parameters(o: BoundOverload) -> list[tuple[str, ParameterKind, str, str | None]]:
    """Each parameter: name, kind, type as the stub shows it, default as shown."""
    return [
        (p.name, p.kind, p.type.text, None if p.default is None else p.default.shown)
        for p in o.parameters
    ]


def m_def(tmp_path: Path, entries: str) -> str:
    """The `m.def(...)` statements of the spec's functions, as the bindings file has them."""
    library = read(tmp_path, entries)
    lines = [line for f in library.functions for line in definitions(f, library.namespace)]
    return "\n".join(lines) + "\n"


def expected(text: str) -> str:
    return textwrap.dedent(text)


def in_module(text: str) -> str:
    """Expected `m.def` statements, written dedented: in NB_MODULE's body, two spaces in."""
    return textwrap.indent(textwrap.dedent(text), "  ")


# -- reading: the model of a bound entry ---------------------------------------------------


def test_parameter_kinds_follow_slash_and_star(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: roll
          python_signature: "roll(a: array, /, b: int, *, c: float = 1.0, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    assert parameters(o) == [
        ("a", ParameterKind.POSITIONAL_ONLY, "array", None),
        ("b", ParameterKind.POSITIONAL, "int", None),
        ("c", ParameterKind.KEYWORD_ONLY, "float", "1.0"),
        ("stream", ParameterKind.KEYWORD_ONLY, "StreamOrDevice", "None"),
    ]
    assert o.returns == "array"
    # Without `call:`, the entry's function gets every parameter, the stream aside.
    assert (o.function, o.code, o.promote) == ("roll", None, ())
    assert o.arguments == (
        CallArgument("a", False),
        CallArgument("b", False),
        CallArgument("c", False),
    )


def test_a_variadic_parameter_is_of_arrays_and_makes_the_rest_keyword_only(
    tmp_path: Path,
) -> None:
    o = overload(
        tmp_path,
        """\
        - name: stack
          python_signature: "stack(*arrays, axis: int = 0, stream: StreamOrDevice = None) -> array"
        """,
    )
    assert parameters(o) == [
        ("arrays", ParameterKind.VARIADIC, "array", None),
        ("axis", ParameterKind.KEYWORD_ONLY, "int", "0"),
        ("stream", ParameterKind.KEYWORD_ONLY, "StreamOrDevice", "None"),
    ]


def test_union_alternatives_in_the_order_written(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: f
          python_signature: "f(w: int | tuple[int, int] | Sequence[tuple[int, int]], v: array | scalar, shape: Shape | int, axis: None | Sequence[int] | int = None, dtype: Optional[mx.Dtype] = None, pairs: list[Sequence[int]] | None = None) -> array"
          code: v
        """,  # noqa: E501
    )
    assert [(p.name, p.type.alternatives, p.type.optional) for p in o.parameters] == [
        ("w", (Leaf.INT, Leaf.INT_PAIR, Leaf.INT_PAIR_LIST), False),
        ("v", (Leaf.ARRAY_LIKE,), False),  # `scalar | array`, either order, is one
        ("shape", (Leaf.INT_OR_SHAPE,), False),  # and so is `int | Shape`
        ("axis", (Leaf.INT_LIST, Leaf.INT), True),
        ("dtype", (Leaf.DTYPE,), True),
        ("pairs", (Leaf.INT_LIST_LIST,), True),
    ]
    # The stub's spelling: MLX's names unprefixed, a shape a sequence, None where written.
    assert [p.type.text for p in o.parameters] == [
        "int | tuple[int, int] | Sequence[tuple[int, int]]",
        "scalar | array",
        "int | Sequence[int]",
        "None | Sequence[int] | int",
        "Dtype | None",
        "Sequence[Sequence[int]] | None",
    ]


def test_defaults_are_python_literals_or_mlx_dtypes(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: f
          python_signature: "f(a: array, keepdims: bool = False, k: int = -1, eps: float = 1e-5, axes: Sequence[int] = (0, 1), mode: str = 'same', dtype: Dtype = mx.float32, x: scalar | array = 2) -> array"
          code: f(a, keepdims, k, eps, axes, mode, dtype, x)
        """,  # noqa: E501
    )
    defaults = [(p.name, p.default) for p in o.parameters if p.default is not None]
    assert [(name, d.shown, d.value) for name, d in defaults if name != "dtype"] == [
        ("keepdims", "False", False),
        ("k", "-1", -1),
        ("eps", "1e-5", 1e-5),
        ("axes", "(0, 1)", (0, 1)),
        ("mode", "'same'", "same"),
        ("x", "2", 2),
    ]
    ((_, dtype),) = [(name, d) for name, d in defaults if name == "dtype"]
    assert (dtype.shown, dtype_name(dtype.value)) == ("float32", "float32")


def test_call_leaves_out_a_parameter_marked_with_a_question_mark(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: sum
          python_signature: "sum(a: array, /, axis: int | Sequence[int] | None = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array"
          call: sum(a, axis?, keepdims)
        """,  # noqa: E501
    )
    assert o.function == "sum"
    assert o.arguments == (
        CallArgument("a", False),
        CallArgument("axis", True),
        CallArgument("keepdims", False),
    )
    assert parameters(o)[1] == (
        "axis",
        ParameterKind.POSITIONAL,
        "int | Sequence[int] | None",
        "None",
    )


def test_call_names_the_cpp_function_as_written(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: abs
          python_name: absolute
          python_signature: "absolute(a: array, /, *, stream: StreamOrDevice = None) -> array"
        - name: std
          python_signature: "std(a: array, /, ddof: int = 0, *, stream: StreamOrDevice = None) -> array"
          call: mlx::core::std(a, ddof)
        """,  # noqa: E501
    )
    absolute, std = library.functions
    # The Python name is the signature's; the C++ function, without `call:`, the entry's.
    assert (absolute.python_name, absolute.overloads[0].function) == ("absolute", "abs")
    assert (std.python_name, std.overloads[0].function) == ("std", "mlx::core::std")
    assert library.operators == ()


def test_code_is_kept_as_written_and_located(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: scale
          python_signature: "scale(a: array, /, alpha: float = 1.0, *, stream: StreamOrDevice = None) -> array"
          code: multiply(a, array(alpha, a.dtype()), s)
        """,  # noqa: E501
    )
    assert (o.function, o.arguments) == (None, ())
    assert o.code == "multiply(a, array(alpha, a.dtype()), s)"
    assert o.code_location is not None
    assert (o.code_location.line, o.code_location.col) == (4, 9)


def test_promote_lists_its_parameters_in_the_order_written(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: where
          python_signature: "where(condition: scalar | array, x: scalar | array, y: array, /, *, stream: StreamOrDevice = None) -> array"
          promote: [y, x]
        """,  # noqa: E501
    )
    assert o.promote == ("y", "x")


def test_overloads_are_tried_in_order_under_one_name(tmp_path: Path) -> None:
    f = function(
        tmp_path,
        """\
        - name: clip
          doc: Clip.
          overloads:
            - python_signature: "clip(a: array, /, a_min: scalar | array | None, a_max: scalar | array | None, *, stream: StreamOrDevice = None) -> array"
              promote: [a, a_min, a_max]
            - python_signature: "clip(a: array, /, bounds: tuple[int, int], *, stream: StreamOrDevice = None) -> array"
              code: clip(a, array(bounds.first), array(bounds.second), s)
        """,  # noqa: E501
    )
    assert (f.python_name, f.doc, f.location.line) == ("clip", "Clip.", 2)
    first, second = f.overloads
    assert [p.name for p in first.parameters] == ["a", "a_min", "a_max", "stream"]
    assert (first.function, first.promote) == ("clip", ("a", "a_min", "a_max"))
    assert [p.name for p in second.parameters] == ["a", "bounds", "stream"]
    assert (second.function, second.code) == (
        None,
        "clip(a, array(bounds.first), array(bounds.second), s)",
    )
    assert (first.location.line, second.location.line) == (5, 7)


def test_a_signature_without_stream_takes_none(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - name: broadcast_arrays
          python_signature: "broadcast_arrays(arrays: Sequence[array]) -> list[array]"
        """,
    )
    assert parameters(o) == [("arrays", ParameterKind.POSITIONAL, "Sequence[array]", None)]
    assert o.arguments == (CallArgument("arrays", False),)
    assert o.returns == "list[array]"


def test_a_python_keyword_is_no_parameter_name(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="'from'"):
        read(
            tmp_path,
            """\
            - name: view
              python_signature: "view(a: array, from: Dtype) -> array"
            """,
        )


# -- generation: the m.def of each shape ------------------------------------------------------


def test_unary_function_of_an_array_like_converts_it(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: abs
          python_signature: "abs(a: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
          doc: The absolute value.
        """,
    )
    assert text == in_module(
        """\
          m.def(
              "abs",
              [](const opgen_mlx::ScalarOrArray& a_py, mlx::core::StreamOrDevice s) {
                const opgen_mlx::ArrayArgument a_array(a_py);
                const mlx::core::array& a = a_array;
                return mlx::core::abs(a, s);
              },
              nb::arg(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def abs(a: scalar | array, /, *, stream: StreamOrDevice = None) -> array"),
              "The absolute value."
          );
        """
    )


def test_an_array_like_is_tried_as_mlx_tries_it_any_other_object_last_converting() -> None:
    """ScalarOrArray has MLX's alternatives in MLX's order. The last takes any object but
    None, and only in nanobind's converting pass, as MLX's `ArrayLike` (an implicit
    conversion) does: a complex whose parts float32 rounds reaches `std::complex` first.
    The ndarray takes any layout, as MLX's does (MLX copies the strides)."""
    variant = support()[support().index("using ScalarOrArray = std::variant<") :]
    alternatives = variant[variant.index("<") + 1 : variant.index(">;")].split(",")
    assert [a.strip() for a in alternatives] == [
        "nb::bool_",
        "nb::int_",
        "nb::float_",
        "mlx::core::array",
        "nb::ndarray<nb::ro>",
        "std::complex<float>",
        "ArrayLike",
    ]
    caster = support()[support().index("struct type_caster<opgen_mlx::ArrayLike>") :]
    assert (
        "if ((flags & static_cast<uint8_t>(cast_flags::convert)) == 0 || source.is_none()) {\n"
        "      return false;\n"
    ) in caster[: caster.index("};")]


def test_promoted_binary_converts_both_to_the_dtype_of_an_array(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: add
          python_signature: "add(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
          promote: [a, b]
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "add",
              [](const opgen_mlx::ScalarOrArray& a_py, const opgen_mlx::ScalarOrArray& b_py, mlx::core::StreamOrDevice s) {
                const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(a_py, b_py);
                const opgen_mlx::ArrayArgument a_array(a_py, promoted_dtype);
                const mlx::core::array& a = a_array;
                const opgen_mlx::ArrayArgument b_array(b_py, promoted_dtype);
                const mlx::core::array& b = b_array;
                return mlx::core::add(a, b, s);
              },
              nb::arg(),
              nb::arg(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def add(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_reduction_leaves_out_a_none_axis_and_visits_the_union(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: sum
          python_signature: "sum(a: array, /, axis: int | Sequence[int] | None = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array"
          call: sum(a, axis?, keepdims)
        """,  # noqa: E501
    )
    # Each alternative calls the C++ overload that takes it: sum(a, int, ...) and
    # sum(a, std::vector<int>, ...); None calls sum(a, keepdims, s).
    assert text == in_module(
        """\
          m.def(
              "sum",
              [](const mlx::core::array& a, const std::optional<std::variant<int, std::vector<int>>>& axis, bool keepdims, mlx::core::StreamOrDevice s) {
                if (!axis) {
                  return mlx::core::sum(a, keepdims, s);
                }
                return std::visit([&](const auto& axis) {
                  return mlx::core::sum(a, axis, keepdims, s);
                }, *axis);
              },
              nb::arg(),
              nb::arg("axis").none() = nb::none(),
              nb::arg("keepdims") = false,
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def sum(a: array, /, axis: int | Sequence[int] | None = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_an_optional_without_union_is_left_out_or_passed_unwrapped(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: var
          python_signature: "var(a: array, /, axis: int | None = None, *, stream: StreamOrDevice = None) -> array"
          call: var(a, axis?)
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "var",
              [](const mlx::core::array& a, std::optional<int> axis, mlx::core::StreamOrDevice s) {
                if (!axis) {
                  return mlx::core::var(a, s);
                }
                return mlx::core::var(a, *axis, s);
              },
              nb::arg(),
              nb::arg("axis").none() = nb::none(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def var(a: array, /, axis: int | None = None, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_code_expression_is_returned_in_the_librarys_namespace(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: scale
          python_signature: "scale(a: array, /, alpha: float = 1.0, *, stream: StreamOrDevice = None) -> array"
          code: multiply(a, array(alpha, a.dtype()), s)
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "scale",
              [](const mlx::core::array& a, double alpha, mlx::core::StreamOrDevice s) {
                using namespace mlx::core;
                return multiply(a, array(alpha, a.dtype()), s);
              },
              nb::arg(),
              nb::arg("alpha") = nb::float_(1.0),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def scale(a: array, /, alpha: float = 1.0, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_code_statements_with_return_are_the_body(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: clip_min
          python_signature: "clip_min(a: array, /, a_min: float | None = None, *, stream: StreamOrDevice = None) -> array"
          code: |-
            if (!a_min) {
              return a;
            }
            return maximum(a, array(*a_min, a.dtype()), s);
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "clip_min",
              [](const mlx::core::array& a, std::optional<double> a_min, mlx::core::StreamOrDevice s) {
                using namespace mlx::core;
                if (!a_min) {
                  return a;
                }
                return maximum(a, array(*a_min, a.dtype()), s);
              },
              nb::arg(),
              nb::arg("a_min").none() = nb::none(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def clip_min(a: array, /, a_min: float | None = None, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_code_statements_with_a_braced_return_are_the_body(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: flat
          python_signature: "flat(a: array, /, *, stream: StreamOrDevice = None) -> array"
          code: "if (a.ndim() == 1) {return a;} else {return flatten(a, s);}"
        """,
    )
    assert text == in_module(
        """\
          m.def(
              "flat",
              [](const mlx::core::array& a, mlx::core::StreamOrDevice s) {
                using namespace mlx::core;
                if (a.ndim() == 1) {return a;} else {return flatten(a, s);}
              },
              nb::arg(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def flat(a: array, /, *, stream: StreamOrDevice = None) -> array")
          );
        """
    )


def test_variadic_arrays_are_collected_and_keyword_only_follows(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: stack
          python_signature: "stack(*arrays: array, axis: int = 0, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    # No nb::kw_only(): nanobind makes what follows nb::args keyword-only.
    assert text == in_module(
        """\
          m.def(
              "stack",
              [](const nb::args& arrays_py, int axis, mlx::core::StreamOrDevice s) {
                const std::vector<mlx::core::array> arrays = opgen_mlx::arrays_of(arrays_py);
                return mlx::core::stack(arrays, axis, s);
              },
              nb::arg("arrays"),
              nb::arg("axis") = nb::int_(0),
              nb::arg("stream") = nb::none(),
              nb::sig("def stack(*arrays: array, axis: int = 0, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_shape_is_checked_into_mlx_dimensions(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: reshape
          python_signature: "reshape(a: array, /, shape: Shape, *, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "reshape",
              [](const mlx::core::array& a, const std::vector<std::int64_t>& shape_py, mlx::core::StreamOrDevice s) {
                const mlx::core::Shape shape = opgen_mlx::to_shape(shape_py);
                return mlx::core::reshape(a, shape, s);
              },
              nb::arg(),
              nb::arg("shape"),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def reshape(a: array, /, shape: Sequence[int], *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_dtype_default_is_mlx_cores_own_object(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: zeros
          python_signature: "zeros(shape: int | Shape, dtype: Dtype = float32, *, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "zeros",
              [](const std::variant<std::int64_t, std::vector<std::int64_t>>& shape_py, mlx::core::Dtype dtype, mlx::core::StreamOrDevice s) {
                const mlx::core::Shape shape = opgen_mlx::to_shape(shape_py);
                return mlx::core::zeros(shape, dtype, s);
              },
              nb::arg("shape"),
              nb::arg("dtype") = nb::module_::import_("mlx.core").attr("float32"),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def zeros(shape: int | Sequence[int], dtype: Dtype = float32, *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


def test_tuple_of_arrays_return_is_a_python_tuple(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: split
          python_signature: "split(a: array, /, indices_or_sections: int | Sequence[int], axis: int = 0, *, stream: StreamOrDevice = None) -> tuple[array, ...]"
        - name: meshgrid
          python_signature: "meshgrid(*arrays: array, sparse: bool = False, indexing: str = 'xy', stream: StreamOrDevice = None) -> tuple[array, ...]"
          code: |-
            std::vector<array> grids = meshgrid(arrays, sparse, indexing, s);
            return grids;
        """,  # noqa: E501
    )
    assert text == in_module(
        """\
          m.def(
              "split",
              [](const mlx::core::array& a, const std::variant<int, std::vector<int>>& indices_or_sections, int axis, mlx::core::StreamOrDevice s) {
                return std::visit([&](const auto& indices_or_sections) {
                  return opgen_mlx::as_tuple(mlx::core::split(a, indices_or_sections, axis, s));
                }, indices_or_sections);
              },
              nb::arg(),
              nb::arg("indices_or_sections"),
              nb::arg("axis") = nb::int_(0),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def split(a: array, /, indices_or_sections: int | Sequence[int], axis: int = 0, *, stream: StreamOrDevice = None) -> tuple[array, ...]")
          );
          m.def(
              "meshgrid",
              [](const nb::args& arrays_py, bool sparse, const std::string& indexing, mlx::core::StreamOrDevice s) {
                const std::vector<mlx::core::array> arrays = opgen_mlx::arrays_of(arrays_py);
                using namespace mlx::core;
                return opgen_mlx::as_tuple([&] {
                  std::vector<array> grids = meshgrid(arrays, sparse, indexing, s);
                  return grids;
                }());
              },
              nb::arg("arrays"),
              nb::arg("sparse") = false,
              nb::arg("indexing") = nb::str("xy"),
              nb::arg("stream") = nb::none(),
              nb::sig("def meshgrid(*arrays: array, sparse: bool = False, indexing: str = 'xy', stream: StreamOrDevice = None) -> tuple[array, ...]")
          );
        """  # noqa: E501
    )


def test_fixed_tuple_of_arrays_return_is_a_python_tuple(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: divmod
          python_signature: "divmod(a: array, b: array, /, *, stream: StreamOrDevice = None) -> tuple[array, array]"
        """,  # noqa: E501
    )
    assert "return opgen_mlx::as_tuple(mlx::core::divmod(a, b, s));" in text


def test_a_function_without_stream_is_called_without_one(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: broadcast_arrays
          python_signature: "broadcast_arrays(arrays: Sequence[array]) -> list[array]"
        """,
    )
    assert text == in_module(
        """\
          m.def(
              "broadcast_arrays",
              [](const std::vector<mlx::core::array>& arrays) {
                return mlx::core::broadcast_arrays(arrays);
              },
              nb::arg("arrays"),
              nb::sig("def broadcast_arrays(arrays: Sequence[array]) -> list[array]")
          );
        """
    )


def test_overloads_are_two_definitions_in_order(tmp_path: Path) -> None:
    text = m_def(
        tmp_path,
        """\
        - name: clip
          overloads:
            - python_signature: "clip(a: array, /, a_min: scalar | array | None, a_max: scalar | array | None, *, stream: StreamOrDevice = None) -> array"
              promote: [a, a_min, a_max]
            - python_signature: "clip(a: array, /, bounds: tuple[int, int], *, stream: StreamOrDevice = None) -> array"
              code: clip(a, array(bounds.first), array(bounds.second), s)
        """,  # noqa: E501
    )
    # nanobind tries the definitions in the order they are made.
    assert text == in_module(
        """\
          m.def(
              "clip",
              [](const mlx::core::array& a, const std::optional<opgen_mlx::ScalarOrArray>& a_min_py, const std::optional<opgen_mlx::ScalarOrArray>& a_max_py, mlx::core::StreamOrDevice s) {
                const std::optional<mlx::core::Dtype> promoted_dtype = opgen_mlx::promoted_dtype(a, a_min_py, a_max_py);
                const std::optional<mlx::core::array> a_min = opgen_mlx::to_array(a_min_py, promoted_dtype);
                const std::optional<mlx::core::array> a_max = opgen_mlx::to_array(a_max_py, promoted_dtype);
                return mlx::core::clip(a, a_min, a_max, s);
              },
              nb::arg(),
              nb::arg("a_min").none(),
              nb::arg("a_max").none(),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def clip(a: array, /, a_min: scalar | array | None, a_max: scalar | array | None, *, stream: StreamOrDevice = None) -> array")
          );

          m.def(
              "clip",
              [](const mlx::core::array& a, const std::pair<int, int>& bounds, mlx::core::StreamOrDevice s) {
                using namespace mlx::core;
                return clip(a, array(bounds.first), array(bounds.second), s);
              },
              nb::arg(),
              nb::arg("bounds"),
              nb::kw_only(),
              nb::arg("stream") = nb::none(),
              nb::sig("def clip(a: array, /, bounds: tuple[int, int], *, stream: StreamOrDevice = None) -> array")
          );
        """  # noqa: E501
    )


# -- the stub ----------------------------------------------------------------------------------


def test_stub_of_bound_functions(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: add
          python_signature: "add(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
          promote: [a, b]
          doc: The sum.
        - name: sum
          python_signature: "sum(a: array, /, axis: int | Sequence[int] | None = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array"
          call: sum(a, axis?, keepdims)
        - name: full
          doc: Filled; each overload shows the docstring.
          overloads:
            - python_signature: "full(shape: int | Shape, vals: scalar | array, dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array"
              code: "dtype ? full(shape, vals, *dtype, s) : full(shape, vals, s)"
            - python_signature: "full(shape: Shape, vals: array, *, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    assert stub([], library.namespace, "@generated", library.functions) == expected(
        '''\
        # @generated
        """MLX operators of mlx::core, bound by opgen."""

        from collections.abc import Sequence
        from typing import TypeAlias, overload

        from mlx.core import Dtype, StreamOrDevice, array

        scalar: TypeAlias = bool | int | float | complex

        def add(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array:
            """The sum."""

        def sum(a: array, /, axis: int | Sequence[int] | None = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array: ...

        @overload
        def full(shape: int | Sequence[int], vals: scalar | array, dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array:
            """Filled; each overload shows the docstring."""

        @overload
        def full(shape: Sequence[int], vals: array, *, stream: StreamOrDevice = None) -> array:
            """Filled; each overload shows the docstring."""
        '''  # noqa: E501
    )


def test_stub_without_scalars_has_no_alias(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: stack
          python_signature: "stack(*arrays: array, axis: int = 0, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    assert stub([], library.namespace, "@generated", library.functions) == expected(
        '''\
        # @generated
        """MLX operators of mlx::core, bound by opgen."""

        from mlx.core import StreamOrDevice, array

        def stack(*arrays: array, axis: int = 0, stream: StreamOrDevice = None) -> array: ...
        '''
    )


def test_stub_imports_what_the_types_name_not_what_the_parameters_are_called(
    tmp_path: Path,
) -> None:
    library = read(
        tmp_path,
        """\
        - name: blend
          python_signature: "blend(float32: array, overload: float, scalar: str = 'float16', *, stream: StreamOrDevice = None) -> array"
          code: multiply(float32, array(overload), s)
        """,  # noqa: E501
    )
    assert stub([], library.namespace, "@generated", library.functions) == expected(
        '''\
        # @generated
        """MLX operators of mlx::core, bound by opgen."""

        from mlx.core import StreamOrDevice, array

        def blend(float32: array, overload: float, scalar: str = 'float16', *, stream: StreamOrDevice = None) -> array: ...
        '''  # noqa: E501
    )


def test_floats_that_are_not_finite_are_defaults_as_python_writes_them(tmp_path: Path) -> None:
    entry = """\
        - name: clamp
          python_signature: "clamp(a: array, low: float = -math.inf, high: float = float('inf'), fill: float = math.nan, top: float = 1e999, *, stream: StreamOrDevice = None) -> array"
          code: minimum(maximum(a, array(low), s), array(high), s)
        """  # noqa: E501
    library = read(tmp_path, entry)
    (o,) = library.functions[0].overloads
    assert [p.default.shown for p in o.parameters[1:5] if p.default] == [
        "-inf",
        "inf",
        "nan",
        "inf",
    ]
    assert stub([], library.namespace, "@generated", library.functions) == expected(
        '''\
        # @generated
        """MLX operators of mlx::core, bound by opgen."""

        from math import inf, nan

        from mlx.core import StreamOrDevice, array

        def clamp(a: array, low: float = -inf, high: float = inf, fill: float = nan, top: float = inf, *, stream: StreamOrDevice = None) -> array: ...
        '''  # noqa: E501
    )
    assert (
        '      nb::arg("low") = nb::float_(-std::numeric_limits<double>::infinity()),\n'
        '      nb::arg("high") = nb::float_(std::numeric_limits<double>::infinity()),\n'
        '      nb::arg("fill") = nb::float_(std::numeric_limits<double>::quiet_NaN()),\n'
        '      nb::arg("top") = nb::float_(std::numeric_limits<double>::infinity()),\n'
    ) in m_def(tmp_path, entry)


def test_a_list_default_of_a_pair_is_shown_as_a_tuple(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - func: mlx::core::pad2(Tensor a, int[2] pad=[1,2], int[] axes=[0,1]) -> Tensor
          code: pad(a, axes, pad, pad, array(0), "constant", s)
        """,
    )
    assert [(p.default.shown, p.default.value) for p in o.parameters[1:3] if p.default] == [
        ("(1, 2)", (1, 2)),
        ("[0,1]", [0, 1]),
    ]


def test_stub_defines_every_name_a_default_uses(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - name: zeros
          python_signature: "zeros(shape: int | Shape, dtype: Dtype | None = float32, *, stream: StreamOrDevice = None) -> array"
        """,  # noqa: E501
    )
    module = ast.parse(stub([], library.namespace, "@generated", library.functions))
    defined = {
        a.asname or a.name for n in module.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    defaults = [
        name.id
        for n in ast.walk(module)
        if isinstance(n, ast.arguments)
        for d in [*n.defaults, *(k for k in n.kw_defaults if k is not None)]
        for name in ast.walk(d)
        if isinstance(name, ast.Name)
    ]
    assert defaults and set(defaults) <= defined


# -- opgen check --------------------------------------------------------------------------------


def check(spec: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", "--mlx", str(spec), "--no-derivatives"], out, err)
    return status, out.getvalue(), err.getvalue()


def test_check_counts_bound_functions_beside_operators(tmp_path: Path) -> None:
    read(
        tmp_path,
        """\
        - name: scaled_add
          signature: "array scaled_add(const array& a, const array& b, float alpha = 1.0)"
        - name: scale
          signature: "array scale(const array& x, float alpha = 2.0f)"
        - name: add
          python_signature: "add(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
          call: mlx::core::add(a, b)
          promote: [a, b]
        - name: exp
          python_signature: "exp(a: array, /, *, stream: StreamOrDevice = None) -> array"
          call: mlx::core::exp(a)
        - name: stack
          python_signature: "stack(*arrays: array, axis: int = 0, stream: StreamOrDevice = None) -> array"
          code: mlx::core::stack(arrays, axis, s)
        """,  # noqa: E501
        namespace="mlxlib",
    )
    spec = tmp_path / "spec.yaml"
    assert check(spec) == (0, f"{spec}: ok: 2 operators, 3 bound functions\n", "")


def test_check_of_bound_functions_alone(tmp_path: Path) -> None:
    read(
        tmp_path,
        """\
        - name: abs
          python_signature: "abs(a: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
        - name: exp
          python_signature: "exp(a: array, /, *, stream: StreamOrDevice = None) -> array"
        """,
    )
    spec = tmp_path / "spec.yaml"
    assert check(spec) == (0, f"{spec}: ok: 0 operators, 2 bound functions\n", "")


# -- opgen's spec language --------------------------------------------------------------


def test_spec_language_overload_names_are_one_function_tried_in_order(tmp_path: Path) -> None:
    library = read(
        tmp_path,
        """\
        - func: mlx::core::sum(Tensor a, bool keepdims=False) -> Tensor
          call: sum(a, keepdims)
          positional_only: [a]
          doc: The sum.
        - func: mlx::core::add(Scalar a, Scalar b) -> Tensor
          promote: [a, b]
        - func: mlx::core::sum.axes(Tensor a, int[] axis, bool keepdims=False) -> Tensor
          call: sum(a, axis, keepdims)
        """,
    )
    assert [(f.python_name, len(f.overloads), f.doc) for f in library.functions] == [
        ("sum", 2, "The sum."),
        ("add", 1, ""),
    ]
    first, second = library.functions[0].overloads
    assert parameters(first) == [
        ("a", ParameterKind.POSITIONAL_ONLY, "array", None),
        ("keepdims", ParameterKind.POSITIONAL, "bool", "False"),
        ("stream", ParameterKind.KEYWORD_ONLY, "StreamOrDevice", "None"),
    ]
    assert [(p.name, p.type.text) for p in second.parameters[:2]] == [
        ("a", "array"),
        ("axis", "Sequence[int]"),
    ]
    (add,) = library.functions[1].overloads
    assert [p.type.text for p in add.parameters] == [
        "scalar | array",
        "scalar | array",
        "StreamOrDevice",
    ]
    assert (add.function, add.promote) == ("add", ("a", "b"))


def test_spec_language_types_shapes_pairs_and_returns(tmp_path: Path) -> None:
    (f,) = read(
        tmp_path,
        """\
        - func: mlx::core::f(SymInt[] shape, int[2] pair, int[3] triple, ScalarType? dtype=None, Scalar? fill=None) -> (Tensor, Tensor)
          code: g(shape, pair, triple, dtype, fill, s)
        """,  # noqa: E501
    ).functions
    (o,) = f.overloads
    assert [p.type.text for p in o.parameters] == [
        "Sequence[int]",
        "tuple[int, int]",
        "tuple[int, int, int]",
        "Dtype | None",
        "scalar | array | None",
        "StreamOrDevice",
    ]
    assert o.parameters[0].type.alternatives == (Leaf.SHAPE,)
    assert o.returns == "tuple[array, array]"


def test_spec_language_variadic_argument(tmp_path: Path) -> None:
    o = overload(
        tmp_path,
        """\
        - func: mlx::core::meshgrid(Tensor[] arrays, bool sparse=False, str indexing="xy") -> Tensor[]
          variadic: arrays
          call: meshgrid(arrays, sparse, indexing)
        """,  # noqa: E501
    )
    assert parameters(o) == [
        ("arrays", ParameterKind.VARIADIC, "array", None),
        ("sparse", ParameterKind.KEYWORD_ONLY, "bool", "False"),
        ("indexing", ParameterKind.KEYWORD_ONLY, "str", '"xy"'),
        ("stream", ParameterKind.KEYWORD_ONLY, "StreamOrDevice", "None"),
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "- func: mlx::core::f(Tensor a, Tensor b) -> Tensor\n  positional_only: [b]\n",
            "'positional_only:' lists the first arguments in order, and argument 1 is 'a'",
        ),
        (
            "- func: mlx::core::f(Tensor a) -> Tensor\n  variadic: a\n",
            "'variadic:' names a positional 'Tensor[]' argument without a default, which "
            "Python takes as '*a'",
        ),
        (
            "- func: mlx::core::f(Generator g) -> Tensor\n  call: f(g)\n",
            "type 'Generator' has no meaning in a bound MLX function",
        ),
        (
            "- func: mlx::core::f(Tensor a) -> float\n  call: f(a)\n",
            "returns (float): a bound function returns 'Tensor', 'Tensor[]', several "
            "'Tensor's, 'bool', 'int' or '()'",
        ),
        (
            "- func: mlx::core::f(Tensor a) -> Tensor\n  call: f(a)\n  grad: {a: grad}\n",
            "'grad:' is not for a bound function",
        ),
    ],
)
def test_spec_language_bound_errors(tmp_path: Path, entry: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        read(tmp_path, entry)
    assert message in str(caught.value)
