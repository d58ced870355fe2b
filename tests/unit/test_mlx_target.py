"""`opgen mlx`: small models in, the exact generated text out.

The operators are built as `opgen.spec.mlx.model` objects, so these tests pin
the generator alone; the end of the file runs the command on spec files (the
reader's path). The example library (tests/examples/test_mlx_library.py)
compiles and runs what these shapes of code become.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from opgen.api import nanobind
from opgen.api.nanobind import NanobindTypeError, float32_literal, signature
from opgen.cli import main
from opgen.diagnostics import Location
from opgen.spec.mlx.model import GradFormula, MlxFunction, MlxLibrary, MlxOperator
from opgen.spec.schema import FunctionSchema
from opgen.targets.mlx import bindings, composite, operators, primitives, stubs
from opgen.targets.mlx.generate import library_files
from opgen.targets.mlx.layout import SUM_TO_INPUT
from opgen.targets.mlx.library import BoundOperator, bind

AT = Location("spec.yaml", 3, 3)


def operator(
    schema: str,
    grads: Sequence[tuple[str, str]] = (),
    dispatch: Mapping[str, str] | None = None,
    shape: str | None = None,
    doc: str = "",
) -> MlxFunction:
    """An operator, and the function of its name that binds it."""
    func = FunctionSchema.parse(schema)
    name = str(func.name)
    formulas = tuple(GradFormula(i, text, AT) for i, text in grads)
    op = MlxOperator(name, func, formulas, dispatch or {}, shape, AT)
    return MlxFunction(name, (), doc, AT, operator=op)


def bound(*functions: MlxFunction) -> tuple[BoundOperator, ...]:
    return bind(MlxLibrary("lib", "lib", functions, "spec.yaml"))


def one(function: MlxFunction) -> BoundOperator:
    return bound(function)[0]


# -- the nanobind convention ---------------------------------------------------------------


def test_signature_of_every_argument_kind() -> None:
    sig = signature(
        FunctionSchema.parse(
            "f(Tensor x, Tensor[] xs, Tensor? bias=None, int axis=-1, *, float eps=1e-05, "
            'bool keep=True, int[] axes=[0,1], ScalarType dtype=float32, str mode="mean", '
            "int? k=None) -> Tensor"
        )
    )
    assert sig.parameters(defaults=True) == [
        "const mlx::core::array& x",
        "const std::vector<mlx::core::array>& xs",
        "const std::optional<mlx::core::array>& bias = std::nullopt",
        "int axis = -1",
        "float eps = 1e-05f",
        "bool keep = true",
        "const std::vector<int>& axes = std::vector<int>{0, 1}",
        "mlx::core::Dtype dtype = mlx::core::float32",
        'const std::string& mode = "mean"',
        "std::optional<int> k = std::nullopt",
        "mlx::core::StreamOrDevice s = {}",
    ]
    assert sig.bindings() == [
        'nb::arg("x")',
        'nb::arg("xs")',
        'nb::arg("bias").none() = nb::none()',
        'nb::arg("axis") = -1',
        "nb::kw_only()",
        'nb::arg("eps") = 1e-05',
        'nb::arg("keep") = true',
        'nb::arg("axes") = std::vector<int>{0, 1}',
        'nb::arg("dtype") = mlx::core::float32',
        'nb::arg("mode") = "mean"',
        'nb::arg("k") = nb::none()',
        'nb::arg("stream") = nb::none()',
    ]
    assert sig.stub("f") == (
        "def f(x: array, xs: Sequence[array], bias: array | None = None, axis: int = -1, "
        "*, eps: float = 1e-05, keep: bool = True, axes: Sequence[int] = ..., "
        "dtype: Dtype = ..., mode: str = 'mean', k: int | None = None, "
        "stream: StreamOrDevice = None) -> array"
    )
    assert sig.stub_imports() == {"array", "Sequence", "Dtype", "StreamOrDevice"}


def test_cpp_defaults_only_for_the_trailing_arguments() -> None:
    sig = signature(FunctionSchema.parse("f(Tensor x, float a=2, *, Tensor y) -> Tensor"))
    assert sig.parameters(defaults=True) == [
        "const mlx::core::array& x",
        "float a",
        "const mlx::core::array& y",
        "mlx::core::StreamOrDevice s = {}",
    ]
    assert sig.bindings()[1] == 'nb::arg("a") = 2.0'  # Python still has the default


def test_returns() -> None:
    def returns(text: str) -> tuple[str, str, int | None]:
        sig = signature(FunctionSchema.parse(f"f(Tensor x) -> {text}"))
        return sig.returns, sig.returns_stub, sig.outputs

    assert returns("Tensor") == ("mlx::core::array", "array", 1)
    assert returns("Tensor[]") == ("std::vector<mlx::core::array>", "list[array]", None)
    assert returns("(Tensor, Tensor)") == (
        "std::tuple<mlx::core::array, mlx::core::array>",
        "tuple[array, array]",
        2,
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("f(Scalar x) -> Tensor", "type 'Scalar' has no MLX meaning"),
        ("f(Tensor x, Generator? g=None) -> Tensor", "type 'Generator?' has no MLX meaning"),
        ("f(Tensor x) -> int", "returns 'int': an MLX operator returns one array"),
        ("f(Tensor x, int stream) -> Tensor", "argument 'stream': the name is reserved"),
        ("f(Tensor x, float a=1e39) -> Tensor", "default '1e39' is out of the range of float"),
        ("f(Tensor x, int[] a=1) -> Tensor", "a list default is written '[...]', not '1'"),
        ("f(Tensor[] x=[]) -> Tensor", "default '[]' for type 'Tensor[]' has no MLX meaning"),
    ],
)
def test_types_without_mlx_meaning(schema: str, message: str) -> None:
    with pytest.raises(NanobindTypeError, match=message.replace("[", r"\[").replace("(", r"\(")):
        signature(FunctionSchema.parse(schema))


def test_float_defaults_equal_what_python_passes() -> None:
    assert [float32_literal(d) for d in ("1e-05", "0.1", "2", "-0.5", "inf")] == [
        "1e-05f",
        "0.1f",
        "2.0f",
        "-0.5f",
        "std::numeric_limits<float>::infinity()",
    ]
    # Just above the midpoint of two floats: the decimal rounds up, its double (the
    # midpoint) rounds to even, down. A Python call gets the latter, so the C++
    # default converts the same double.
    assert float32_literal("1.00000005960464477539063") == (
        "static_cast<float>(1.00000005960464477539063)"
    )
    assert nanobind.float64_literal("3") == "3.0"


# -- composite operators -------------------------------------------------------------------


def test_composite_without_formulas_only_calls_the_impl() -> None:
    op = one(operator("add2(Tensor a, Tensor b) -> Tensor"))
    assert composite.definition(op) == textwrap.dedent(
        """\
        mlx::core::array add2(
            const mlx::core::array& a,
            const mlx::core::array& b,
            mlx::core::StreamOrDevice s) {
          return add2_impl(a, b, s);
        }
        """
    )


def test_composite_with_formulas_is_a_custom_vjp() -> None:
    op = one(
        operator(
            "scaled_add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor",
            [("a", "grad"), ("b", "multiply(grad, array(alpha), s)")],
        )
    )
    # Each formula stands behind a `#line` to its place in the spec (at column 1 when, as
    # here, the location does not span the text as written); the directive back is
    # numbered when the file is rendered.
    assert composite.definition(op) == textwrap.dedent(
        """\
        mlx::core::array scaled_add(
            const mlx::core::array& a,
            const mlx::core::array& b,
            float alpha,
            mlx::core::StreamOrDevice s) {
          const mlx::core::Stream stream = mlx::core::to_stream(s);
          auto forward = [alpha, s = stream](const std::vector<mlx::core::array>& primals) -> std::vector<mlx::core::array> {
            const mlx::core::array& a = primals[0];
            const mlx::core::array& b = primals[1];
            return {scaled_add_impl(a, b, alpha, s)};
          };
          auto backward = [alpha, s = stream](
              const std::vector<mlx::core::array>& primals,
              const std::vector<mlx::core::array>& cotangents,
              const std::vector<mlx::core::array>& /* outputs */) -> std::vector<mlx::core::array> {
            using namespace mlx::core;
            const mlx::core::array& grad = cotangents[0];
            std::vector<mlx::core::array> vjps;
            vjps.push_back(opgen_sum_to_input(
        #line 3 "spec.yaml"
        grad,
        #line OPGEN_GENERATED_LINE
                primals[0], "scaled_add: the gradient formula for 'a'", s));
            vjps.push_back(opgen_sum_to_input(
        #line 3 "spec.yaml"
        multiply(grad, array(alpha), s),
        #line OPGEN_GENERATED_LINE
                primals[1], "scaled_add: the gradient formula for 'b'", s));
            return vjps;
          };
          const std::vector<mlx::core::array> inputs{a, b};
          return mlx::core::custom_vjp(forward, backward)(inputs)[0];
        }
        """  # noqa: E501
    )


def test_optional_array_and_an_input_without_formula() -> None:
    op = one(
        operator(
            "linear(Tensor x, Tensor w, Tensor? bias=None) -> Tensor",
            [("x", "matmul(grad, w, s)"), ("bias", "sum(grad, 0, false, s)")],
        )
    )
    assert composite.definition(op) == textwrap.dedent(
        """\
        mlx::core::array linear(
            const mlx::core::array& x,
            const mlx::core::array& w,
            const std::optional<mlx::core::array>& bias,
            mlx::core::StreamOrDevice s) {
          const mlx::core::Stream stream = mlx::core::to_stream(s);
          const bool has_bias = bias.has_value();
          auto forward = [has_bias, s = stream](const std::vector<mlx::core::array>& primals) -> std::vector<mlx::core::array> {
            const mlx::core::array& x = primals[0];
            const mlx::core::array& w = primals[1];
            const std::optional<mlx::core::array> bias = has_bias ? std::optional<mlx::core::array>(primals[2]) : std::nullopt;
            return {linear_impl(x, w, bias, s)};
          };
          auto backward = [has_bias, s = stream, forward](
              const std::vector<mlx::core::array>& primals,
              const std::vector<mlx::core::array>& cotangents,
              const std::vector<mlx::core::array>& /* outputs */) -> std::vector<mlx::core::array> {
            using namespace mlx::core;
            const mlx::core::array& w = primals[1];
            const mlx::core::array& grad = cotangents[0];
            const std::vector<mlx::core::array> traced = mlx::core::vjp(forward, primals, cotangents).second;
            std::vector<mlx::core::array> vjps;
            vjps.push_back(opgen_sum_to_input(
        #line 3 "spec.yaml"
        matmul(grad, w, s),
        #line OPGEN_GENERATED_LINE
                primals[0], "linear: the gradient formula for 'x'", s));
            vjps.push_back(traced[1]);
            if (has_bias) {
              vjps.push_back(opgen_sum_to_input(
        #line 3 "spec.yaml"
        sum(grad, 0, false, s),
        #line OPGEN_GENERATED_LINE
                  primals[2], "linear: the gradient formula for 'bias'", s));
            }
            return vjps;
          };
          std::vector<mlx::core::array> inputs;
          inputs.push_back(x);
          inputs.push_back(w);
          if (bias) {
            inputs.push_back(*bias);
          }
          return mlx::core::custom_vjp(forward, backward)(inputs)[0];
        }
        """  # noqa: E501
    )


def test_list_argument() -> None:
    op = one(
        operator(
            "lsum(Tensor[] ys, Tensor z) -> Tensor",
            [("ys", "std::vector<array>(ys.size(), grad)"), ("z", "grad")],
        )
    )
    text = composite.definition(op)
    assert "  const int ys_size = static_cast<int>(ys.size());\n" in text
    assert (
        "    const std::vector<mlx::core::array> ys(primals.begin(), primals.begin() + ys_size);\n"
        "    const mlx::core::array& z = primals[ys_size];\n"
        "    return {lsum_impl(ys, z, s)};\n"
    ) in text
    assert text.endswith(
        "    std::vector<mlx::core::array> vjps;\n"
        "    for (const mlx::core::array& g :\n"
        '#line 3 "spec.yaml"\n'
        "std::vector<array>(ys.size(), grad)) {\n"
        "#line OPGEN_GENERATED_LINE\n"
        "      vjps.push_back(opgen_sum_to_input(g, primals[vjps.size()], "
        "\"lsum: the gradient formula for 'ys'\", s));\n"
        "    }\n"
        "    vjps.push_back(opgen_sum_to_input(\n"
        '#line 3 "spec.yaml"\n'
        "grad,\n"
        "#line OPGEN_GENERATED_LINE\n"
        "        primals[ys_size], \"lsum: the gradient formula for 'z'\", s));\n"
        "    return vjps;\n"
        "  };\n"
        "  std::vector<mlx::core::array> inputs;\n"
        "  for (const mlx::core::array& a : ys) {\n"
        "    inputs.push_back(a);\n"
        "  }\n"
        "  inputs.push_back(z);\n"
        "  return mlx::core::custom_vjp(forward, backward)(inputs)[0];\n"
        "}\n"
    )


def test_multi_output_composite() -> None:
    op = one(operator("mean_var(Tensor x, int axis=-1) -> (Tensor, Tensor)", [("x", "grads[1]")]))
    text = composite.definition(op)
    assert (
        "    return std::apply([](const auto&... r) { return std::vector<mlx::core::array>{r...}; }"
        ", mean_var_impl(x, axis, s));\n"
    ) in text
    assert text.endswith(
        "  const std::vector<mlx::core::array> inputs{x};\n"
        "  const std::vector<mlx::core::array> outputs = "
        "mlx::core::custom_vjp(forward, backward)(inputs);\n"
        "  return std::make_tuple(outputs[0], outputs[1]);\n"
        "}\n"
    )


# -- primitives ----------------------------------------------------------------------------


def test_primitive_class_and_operator() -> None:
    op = one(
        operator(
            "scale(Tensor x, Tensor y, *, float alpha=0.5) -> Tensor",
            [("x", "multiply(grad, array(alpha), s)")],
            dispatch={"cpu": "scale_cpu"},
        )
    )
    assert primitives.class_definition(op) == textwrap.dedent(
        """\
        class ScalePrimitive : public mlx::core::Primitive {
         public:
          explicit ScalePrimitive(mlx::core::Stream stream, float alpha)
              : mlx::core::Primitive(stream), alpha_(alpha) {}

          void eval_cpu(const std::vector<mlx::core::array>& inputs, std::vector<mlx::core::array>& outputs) override {
            dispatch_cpu(stream(), inputs, outputs, [alpha = alpha_](
                const std::vector<mlx::core::array>& in, std::vector<mlx::core::array>& out) {
              scale_cpu(in, out, alpha);
            });
          }

          void eval_gpu(const std::vector<mlx::core::array>& /* inputs */, std::vector<mlx::core::array>& /* outputs */) override {
            throw std::runtime_error("scale: no GPU kernel");
          }

          std::vector<mlx::core::array> vjp(
              const std::vector<mlx::core::array>& primals,
              const std::vector<mlx::core::array>& cotangents,
              const std::vector<int>& argnums,
              const std::vector<mlx::core::array>& /* outputs */) override {
            using namespace mlx::core;
            const mlx::core::Stream s = stream();
            const auto& alpha = alpha_;
            const mlx::core::array& grad = cotangents[0];
            std::vector<mlx::core::array> vjps;
            vjps.reserve(argnums.size());
            for (const int i : argnums) {
              if (i == 0) {
                vjps.push_back(opgen_sum_to_input(
        #line 3 "spec.yaml"
        multiply(grad, array(alpha), s),
        #line OPGEN_GENERATED_LINE
                    primals[i], "scale: the gradient formula for 'x'", s));
              } else if (i == 1) {
                throw std::invalid_argument("scale: no gradient formula for 'y'");
              } else {
                throw std::invalid_argument("scale: no input with this index");
              }
            }
            return vjps;
          }

          const char* name() const override { return "Scale"; }

          bool is_equivalent(const mlx::core::Primitive& other) const override {
            const auto& o = static_cast<const ScalePrimitive&>(other);
            return alpha_ == o.alpha_;
          }

          std::vector<mlx::core::Shape> output_shapes(const std::vector<mlx::core::array>& inputs) override {
            return std::vector<mlx::core::Shape>(1, inputs[0].shape());
          }

         private:
          float alpha_;
        };
        """  # noqa: E501
    )
    assert primitives.operator_definition(op) == textwrap.dedent(
        """\
        mlx::core::array scale(
            const mlx::core::array& x,
            const mlx::core::array& y,
            float alpha,
            mlx::core::StreamOrDevice s) {
          const mlx::core::Stream stream = mlx::core::to_stream(s);
          const std::vector<mlx::core::array> inputs{mlx::core::contiguous(x, false, stream), mlx::core::contiguous(y, false, stream)};
          std::vector<mlx::core::Shape> shapes(1, inputs[0].shape());
          const std::vector<mlx::core::Dtype> dtypes(shapes.size(), inputs[0].dtype());
          std::vector<mlx::core::array> outputs = mlx::core::array::make_arrays(std::move(shapes), dtypes, std::make_shared<ScalePrimitive>(stream, alpha), inputs);
          return outputs[0];
        }
        """  # noqa: E501
    )


def test_primitive_with_gpu_kernel_shape_rule_and_optional_input() -> None:
    op = one(
        operator(
            "pick(Tensor x, Tensor? mask=None, int n=2) -> (Tensor, Tensor)",
            dispatch={"cpu": "pick_cpu", "gpu": "kernels::pick_metal"},
            shape="std::vector<Shape>{Shape{n}, x.shape()}",
        )
    )
    assert primitives.helpers(op) == textwrap.dedent(
        """\
        std::vector<mlx::core::Shape> pick_output_shapes(
            const std::vector<mlx::core::array>& /* inputs */,
            const mlx::core::array& x,
            const std::optional<mlx::core::array>& /* mask */,
            int n) {
          using namespace mlx::core;
          return as_shapes(std::vector<Shape>{Shape{n}, x.shape()});
        }
        """
    )
    text = primitives.class_definition(op)
    assert (
        "  void eval_gpu(const std::vector<mlx::core::array>& inputs, "
        "std::vector<mlx::core::array>& outputs) override {\n"
        "    kernels::pick_metal(inputs, outputs, n_, stream());\n"
        "  }\n"
    ) in text
    assert "  std::vector<mlx::core::array> vjp(" not in text  # MLX's own error
    assert (
        "    const mlx::core::array& x = inputs[0];\n"
        "    const std::optional<mlx::core::array> mask = has_mask_ ? "
        "std::optional<mlx::core::array>(inputs[1]) : std::nullopt;\n"
        "    return pick_output_shapes(inputs, x, mask, n_);\n"
    ) in text
    assert text.endswith(
        "    return n_ == o.n_ && has_mask_ == o.has_mask_;\n"
        "  }\n\n"
        "  std::vector<mlx::core::Shape> output_shapes(const std::vector<mlx::core::array>& "
        "inputs) override {\n"
        "    const mlx::core::array& x = inputs[0];\n"
        "    const std::optional<mlx::core::array> mask = has_mask_ ? "
        "std::optional<mlx::core::array>(inputs[1]) : std::nullopt;\n"
        "    return pick_output_shapes(inputs, x, mask, n_);\n"
        "  }\n\n"
        " private:\n"
        "  int n_;\n"
        "  bool has_mask_;\n"
        "};\n"
    )
    assert operators.header([op], "lib", "c").endswith(
        "// from eval_gpu with the stream, and allocates its outputs itself.\n"
        "namespace lib {\n\n"
        "void pick_cpu(\n"
        "    const std::vector<mlx::core::array>& inputs,\n"
        "    std::vector<mlx::core::array>& outputs,\n"
        "    int n);\n\n"
        "} // namespace lib\n\n"
        "namespace kernels {\n\n"
        "void pick_metal(\n"
        "    const std::vector<mlx::core::array>& inputs,\n"
        "    std::vector<mlx::core::array>& outputs,\n"
        "    int n,\n"
        "    const mlx::core::Stream& stream);\n\n"
        "} // namespace kernels\n"
    )


def test_list_input_of_a_primitive_indexes_argnums() -> None:
    op = one(
        operator(
            "psum(Tensor x, Tensor[] ys) -> Tensor",
            [("x", "grad"), ("ys", "std::vector<array>(ys.size(), grad)")],
            dispatch={"cpu": "psum_cpu"},
        )
    )
    text = primitives.class_definition(op)
    assert (
        "      } else if (i >= 1 && i < 1 + ys_size_) {\n"
        "        if (!ys_grads) {\n"
        "          ys_grads =\n"
        '#line 3 "spec.yaml"\n'
        "std::vector<array>(ys.size(), grad);\n"
        "#line OPGEN_GENERATED_LINE\n"
        "        }\n"
        "        vjps.push_back(opgen_sum_to_input((*ys_grads)[i - 1], primals[i], "
        "\"psum: the gradient formula for 'ys'\", s));\n"
    ) in text
    assert "std::make_shared<PsumPrimitive>(stream, static_cast<int>(ys.size()))" in (
        primitives.operator_definition(op)
    )


def test_header_declares_operators_impls_and_kernels() -> None:
    ops = bound(
        operator("neg(Tensor x) -> Tensor", doc="-x."),
        operator("twice(Tensor x, *, float k=2) -> Tensor", dispatch={"cpu": "twice_cpu"}),
    )
    assert operators.header(ops, "lib", "@generated") == textwrap.dedent(
        """\
        // @generated
        #pragma once

        #include <limits>
        #include <optional>
        #include <string>
        #include <tuple>
        #include <vector>

        #include "mlx/mlx.h"

        namespace lib {

        // -x.
        mlx::core::array neg(const mlx::core::array& x, mlx::core::StreamOrDevice s = {});

        mlx::core::array twice(const mlx::core::array& x, float k = 2.0f, mlx::core::StreamOrDevice s = {});

        // Written by the library's author: each composite operator, from mlx::core
        // operations on the stream `s` (MLX differentiates them, or the formulas do).
        mlx::core::array neg_impl(const mlx::core::array& x, mlx::core::StreamOrDevice s);

        } // namespace lib

        // Written by the library's author: the kernels of the primitives. A CPU kernel
        // runs on the stream's CPU worker; its inputs are row-contiguous and its
        // outputs allocated (row-contiguous) before it runs. A GPU kernel is called
        // from eval_gpu with the stream, and allocates its outputs itself.
        namespace lib {

        void twice_cpu(
            const std::vector<mlx::core::array>& inputs,
            std::vector<mlx::core::array>& outputs,
            float k);

        } // namespace lib
        """  # noqa: E501
    )
    source = operators.source(ops, "lib", "lib_ops.h", "@generated")
    assert source.startswith(
        "// @generated\n"
        '#include "lib_ops.h"\n\n'
        "#include <memory>\n#include <stdexcept>\n#include <utility>\n\n"
        '#include "mlx/allocator.h"\n#include "mlx/backend/cpu/encoder.h"\n'
        '#include "mlx/primitives.h"\n\n'
        "namespace lib {\n\nnamespace {\n\n" + primitives.DISPATCH_CPU + "\nclass TwicePrimitive"
    )
    assert (
        "} // namespace\n\n"
        "mlx::core::array neg(const mlx::core::array& x, mlx::core::StreamOrDevice s) {\n"
        "  return neg_impl(x, s);\n}\n\n"
        "mlx::core::array twice("
    ) in source
    assert source.endswith("  return outputs[0];\n}\n\n} // namespace lib\n")


# -- bindings, stub, files -----------------------------------------------------------------


def test_binding_and_stub() -> None:
    op = one(
        operator(
            "linear(Tensor x, Tensor w, Tensor? bias=None, *, float alpha=1e-05) -> Tensor",
            doc='x @ w.T + bias\n\n"Linear".',
        )
    )
    assert bindings.definition(op, "lib") == [
        "  m.def(\n"
        '      "linear",\n'
        "      &lib::linear,\n"
        '      nb::arg("x"),\n'
        '      nb::arg("w"),\n'
        '      nb::arg("bias").none() = nb::none(),\n'
        "      nb::kw_only(),\n"
        '      nb::arg("alpha") = 1e-05,\n'
        '      nb::arg("stream") = nb::none(),\n'
        '      "x @ w.T + bias\\n\\n\\"Linear\\".");'
    ]
    assert stubs.stub([op], "lib", "@generated") == textwrap.dedent(
        '''\
        # @generated
        """MLX operators of lib, bound by opgen."""

        from mlx.core import StreamOrDevice, array

        def linear(x: array, w: array, bias: array | None = None, *, alpha: float = 1e-05, stream: StreamOrDevice = None) -> array:
            """x @ w.T + bias

            "Linear".
            """
        '''  # noqa: E501
    )


def test_files_of_a_library(tmp_path: Path) -> None:
    library = MlxLibrary(
        "lib", "_lib", (operator("neg(Tensor x) -> Tensor"),), str(tmp_path / "spec.yaml")
    )
    outputs = library_files(library, tmp_path, "spec.yaml")
    assert outputs.paths() == [
        "lib_ops.h",
        "lib_ops.cpp",
        "_lib_bindings.cpp",
        "_lib.pyi",
        "_lib.cmake",
    ]
    assert "NB_MODULE(_lib, m) {\n" in outputs.text("_lib_bindings.cpp")
    cmake = outputs.text("_lib.cmake")
    assert "function(opgen_add__lib_module target)\n" in cmake
    assert "nanobind_add_module(${target} NB_STATIC NOMINSIZE NB_DOMAIN mlx " in cmake
    assert '  "${CMAKE_CURRENT_LIST_DIR}/lib_ops.cpp"\n' in cmake
    assert "mlx/primitives.h" not in outputs.text("lib_ops.cpp")  # no primitives


# -- the command ---------------------------------------------------------------------------

SPEC = """\
- namespace: lib
  module: _lib
- func: lib::scaled_add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor
  doc: a + alpha * b.
  grad:
    a: grad
    b: multiply(grad, array(alpha, grad.dtype()), s)
- func: lib::axpby(Tensor x, Tensor y, float alpha, float beta) -> Tensor
  dispatch: {cpu: axpby_cpu}
"""


def run(tmp_path: Path, *flags: str, spec: str = SPEC) -> tuple[int, str, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(spec, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = main(["mlx", str(path), "-o", str(tmp_path / "out"), *flags], out, err)
    return status, out.getvalue(), err.getvalue()


def test_command_writes_the_files_once(tmp_path: Path) -> None:
    status, out, err = run(tmp_path)
    assert (status, err) == (0, "")
    root = tmp_path / "out"
    assert out == (
        f"_lib: 2 operators (1 primitive, 1 with gradient formulas): 5 files in {root}, wrote 5\n"
    )
    assert sorted(p.name for p in root.iterdir()) == [
        "_lib.cmake",
        "_lib.pyi",
        "_lib_bindings.cpp",
        "lib_ops.cpp",
        "lib_ops.h",
    ]
    assert run(tmp_path)[1].endswith("wrote 0\n")  # unchanged files are not rewritten


def test_command_listing_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "out"
    assert run(tmp_path, "--list-sources")[:2] == (
        0,
        f"{root}/lib_ops.cpp\n{root}/_lib_bindings.cpp\n",
    )
    assert run(tmp_path, "--module", "other", "--list-files")[1].splitlines() == [
        f"{root}/lib_ops.h",
        f"{root}/lib_ops.cpp",
        f"{root}/other_bindings.cpp",
        f"{root}/other.pyi",
        f"{root}/other.cmake",
    ]
    assert not root.exists()


def test_command_reports_spec_errors(tmp_path: Path) -> None:
    status, out, err = run(tmp_path, spec=SPEC.replace("Tensor b,", "Scalar b,"))
    assert (status, out) == (1, "")
    assert "spec.yaml:3:" in err and "Scalar" in err
    assert not (tmp_path / "out").exists()


def test_the_broadcast_sum_is_written_once_for_every_operator_with_formulas() -> None:
    ops = bound(
        operator("twice(Tensor a) -> Tensor", [("a", "multiply(grad, array(2.0f), s)")]),
        operator("thrice(Tensor a) -> Tensor", [("a", "multiply(grad, array(3.0f), s)")]),
        operator(
            "axpy(Tensor x, Tensor y) -> Tensor",
            [("x", "grad"), ("y", "grad")],
            dispatch={"cpu": "axpy_cpu"},
        ),
    )
    source = operators.source(ops, "lib", "lib_ops.h", "@generated")
    assert source.count(SUM_TO_INPUT) == 1
    assert source.index(SUM_TO_INPUT) < source.index("class AxpyPrimitive")
    plain = bound(operator("plain(Tensor a) -> Tensor"))
    assert SUM_TO_INPUT not in operators.source(plain, "lib", "lib_ops.h", "@generated")
