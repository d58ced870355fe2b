"""MLX extension specs: snippets in both dialects in, the exact model out.

Formulas are checked against a small fixed set of `mlx::core` names
(`MLX_OPS`), so that these tests do not depend on the installed MLX; one
test reads the installed headers. The malformed inputs and their exact
diagnostics are the corpus `tests/malformed_mlx/` (test_malformed_mlx.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen.diagnostics import SpecError
from opgen.spec.mlx.mlx_headers import declared_names, find_mlx_include, mlx_names
from opgen.spec.mlx.model import MlxFunction, MlxLibrary
from opgen.spec.mlx.reader import load_mlx_library

MLX_OPS = frozenset(
    {
        "add",
        "multiply",
        "exp",
        "sum",
        "mean",
        "rsqrt",
        "square",
        "array",
        "float32",
        "fast::rms_norm",
    }
)


def load(tmp_path: Path, spec: str, derivatives: str | None = None, **options: str) -> MlxLibrary:
    path = tmp_path / "spec.yaml"
    path.write_text(spec, encoding="utf-8")
    if derivatives is not None:
        (tmp_path / "derivatives.yaml").write_text(derivatives, encoding="utf-8")
    return load_mlx_library(str(path), mlx_ops=MLX_OPS, **options)


def errors(tmp_path: Path, spec: str, derivatives: str | None = None) -> list[str]:
    with pytest.raises(SpecError) as info:
        load(tmp_path, spec, derivatives)
    return [str(d).replace(f"{tmp_path}/", "") for d in info.value.diagnostics]


def summary(f: MlxFunction) -> tuple[str, str, str, list[tuple[str, str]], dict[str, str]]:
    op = f.operator
    assert op is not None
    grads = [(g.input, g.formula) for g in op.grads]
    return op.name, f.python_name, str(op.func), grads, dict(op.dispatch)


# -- opgen's spec language -------------------------------------------------------------


def test_spec_language_entries(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        "- func: mlxlib::rms_norm(Tensor x, Tensor weight, float eps=1e-5) -> Tensor\n"
        "  doc: Root-mean-square normalization.\n"
        "  grad:\n"
        "    weight: sum(multiply(grad, x, s), 0, false, s)\n"
        "    x: multiply(grad, rsqrt(add(mean(square(x)), array(eps))))\n"
        "- func: mlxlib::scale(Tensor x, *, float alpha=2.0, int[] axes=[], "
        "ScalarType? dtype=None) -> Tensor\n"
        "  python_name: scale_by\n"
        "  dispatch: {cpu: scale_cpu, gpu: scale_metal}\n"
        "  shape: x.shape()\n",
    )
    assert (library.namespace, library.module) == ("mlxlib", "mlxlib")
    rms_norm, scale = library.functions
    assert summary(rms_norm) == (
        "rms_norm",
        "rms_norm",
        "rms_norm(Tensor x, Tensor weight, float eps=1e-5) -> Tensor",
        [  # in argument order, whatever the order of the keys
            ("x", "multiply(grad, rsqrt(add(mean(square(x)), array(eps))))"),
            ("weight", "sum(multiply(grad, x, s), 0, false, s)"),
        ],
        {},
    )
    assert rms_norm.doc == "Root-mean-square normalization."
    assert rms_norm.operator is not None and not rms_norm.operator.is_primitive
    assert summary(scale) == (
        "scale",
        "scale_by",
        "scale(Tensor x, *, float alpha=2.0, int[] axes=[], ScalarType? dtype=None) -> Tensor",
        [],
        {"cpu": "scale_cpu", "gpu": "scale_metal"},
    )
    assert scale.operator is not None and scale.operator.shape == "x.shape()"
    assert scale.operator.is_primitive


def test_formulas_from_derivatives_yaml_beside_the_spec(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        "- func: mlxlib::mul(Tensor a, Tensor b) -> Tensor\n"
        "- func: mlxlib::pair(Tensor x) -> (Tensor, Tensor)\n",
        "- name: mlxlib::mul(Tensor a, Tensor b) -> Tensor\n"
        "  b: multiply(grad, a)\n"
        "  a: multiply(grad, b)\n"
        "- name: pair(Tensor x) -> (Tensor, Tensor)\n"
        "  x: add(grads[0], grads[1])\n",
    )
    mul, pair = library.operators
    assert [(g.input, g.formula) for g in mul.grads] == [
        ("a", "multiply(grad, b)"),
        ("b", "multiply(grad, a)"),
    ]
    assert str(mul.grads[0].location) == f"{tmp_path}/derivatives.yaml:3:6"
    assert [(g.input, g.formula) for g in pair.grads] == [("x", "add(grads[0], grads[1])")]


def test_settings_entry_names_the_module(tmp_path: Path) -> None:
    spec = "- namespace: mlxlib\n  module: _ext\n- func: mlxlib::neg(Tensor x) -> Tensor\n"
    assert load(tmp_path, spec).module == "_ext"
    assert load(tmp_path, spec, module="other").module == "other"  # the caller's wins


# -- the MLX dialect ---------------------------------------------------------------------


def test_one_signature_maps_every_cpp_type(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        "- namespace: mlxlib\n"
        "- name: every_type\n"
        '  signature: "mlx::core::array every_type(const array& a, '
        "std::optional<mlx::core::array> b, const std::vector<array>& c, int d, int64_t e, "
        "double f, bool g, const std::string& h, std::optional<int> i, const Shape& j, "
        "std::vector<int> k, std::optional<std::vector<int>> l, Dtype m, "
        'std::optional<Dtype> n, mlx::core::StreamOrDevice s = {})"\n',
    )
    (op,) = library.operators
    assert str(op.func) == (
        "every_type(Tensor a, Tensor? b, Tensor[] c, int d, int e, float f, bool g, str h, "
        "int? i, int[] j, int[] k, int[]? l, ScalarType m, ScalarType? n) -> Tensor"
    )


def test_one_signature_defaults_and_keyword_only(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        "- namespace: mlxlib\n"
        "- name: norm\n"
        "  signature: 'std::tuple<array, array, array> norm(const array& x, "
        "const std::optional<array>& bias = std::nullopt, float eps = 1e-5f, int axis = -1, "
        "bool keepdims = false, std::optional<Dtype> dtype = std::nullopt, "
        'const std::vector<int>& axes = {0, 1}, Dtype out = float32, std::string mode = "mean")\'\n'
        "  keyword_only: [dtype, axes, out, mode]\n"
        "  python_name: norm_\n",
    )
    (function,) = library.functions
    op = function.operator
    assert op is not None
    assert (op.name, function.python_name) == ("norm", "norm_")
    assert str(op.func) == (
        "norm(Tensor x, Tensor? bias=None, float eps=1e-5, int axis=-1, bool keepdims=False, "
        '*, ScalarType? dtype=None, int[] axes=[0,1], ScalarType out=float32, str mode="mean") '
        "-> (Tensor, Tensor, Tensor)"
    )


def test_split_form(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        "- namespace: mlxlib\n"
        "- name: axpy\n"
        '  cpp_signature: "std::pair<array, array>(const array&, const std::optional<array>&, '
        'float alpha, const std::vector<int>&, StreamOrDevice)"\n'
        '  python_signature: "axpy_(x: array, y: mx.array | None = None, *, alpha: float = 2, '
        'axes=(0, 1), stream: Stream | None = None) -> tuple[array, array]"\n'
        "  grad:\n"
        "    x: multiply(grads[0], array(alpha))\n",
    )
    (function,) = library.functions
    assert summary(function) == (
        "axpy",
        "axpy_",  # the Python signature's name
        "axpy(Tensor x, Tensor? y=None, *, float alpha=2, int[] axes=[0,1]) -> (Tensor, Tensor)",
        [("x", "multiply(grads[0], array(alpha))")],
        {},
    )


def test_both_dialects_and_both_forms_read_alike(tmp_path: Path) -> None:
    spec_language = "- func: mlxlib::add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor\n"
    one_signature = (
        "- namespace: mlxlib\n"
        "- name: add\n"
        '  signature: "array add(const array& a, const array& b, float alpha = 1.0)"\n'
        "  keyword_only: [alpha]\n"
    )
    split = (
        "- namespace: mlxlib\n"
        "- name: add\n"
        '  cpp_signature: "array(const array&, const array&, float)"\n'
        '  python_signature: "add(a: array, b: array, *, alpha: float = 1.0) -> array"\n'
    )
    read = [load(tmp_path, spec).functions[0] for spec in (spec_language, one_signature, split)]
    assert {(summary(f)[0], f.python_name, summary(f)[2]) for f in read} == {
        ("add", "add", "add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor")
    }


def test_mlx_dialect_derivatives_by_bare_name(tmp_path: Path) -> None:
    library = load(
        tmp_path,
        '- namespace: mlxlib\n- name: my_exp\n  signature: "array my_exp(const array& x)"\n',
        "- name: my_exp\n  x: multiply(grad, result)\n",
    )
    assert [(g.input, g.formula) for g in library.operators[0].grads] == [
        ("x", "multiply(grad, result)")
    ]


def test_derivatives_file_rules_of_the_mlx_dialect(tmp_path: Path) -> None:
    spec = "- func: mlxlib::mul(Tensor a, Tensor b) -> Tensor\n"
    derivatives = (
        "- include: mlxlib/helpers.h\n"
        "- name: other::mul\n"
        "  a: multiply(grad, b)\n"
        "- name: mul\n"
        "  a, b: multiply(grad, b)\n"
        "  bb: multiply(grad, a)\n"
    )
    assert errors(tmp_path, spec, derivatives) == [
        "derivatives.yaml:1:3: error: 'include:' entries are for `opgen torch-library`: MLX "
        "formulas call mlx::core operations and the extension's operators",
        "derivatives.yaml:2:9: error: the operators are in namespace 'mlxlib', not 'other'",
        "derivatives.yaml:5:3: error: 'a, b': a formula gives the gradient of one input; write "
        "one key per input",
    ]
    derivatives = "- name: mul\n  bb: multiply(grad, a)\n"
    assert errors(tmp_path, spec, derivatives) == [
        "derivatives.yaml:2:3: error: 'mul' has no input named 'bb'; did you mean 'b'?"
    ]


def test_names_the_generated_code_declares(tmp_path: Path) -> None:
    spec = (
        "- namespace: mlxlib\n"
        "- func: mlxlib::f(Tensor traced) -> Tensor\n"
        "- func: mlxlib::g(Tensor x) -> Tensor[]\n"
        "  dispatch: {cpu: g_cpu}\n"
        "- func: mlxlib::h(Tensor x, Tensor x_size) -> Tensor\n"
        "- func: mlxlib::k(Tensor x) -> Tensor\n"
        "  python_name: Sequence\n"
    )
    assert errors(tmp_path, spec) == [
        "spec.yaml:2:26: error: an argument cannot be named 'traced': formulas and bindings "
        "use that name (argnums, backward, cotangent, cotangents, forward, grad, grads, inputs, "
        "output, outputs, primals, result, results, s, stream, traced, vjps)",
        "spec.yaml:4:3: error: 'g' is a primitive returning 'Tensor[]': give the number and "
        "shapes of its outputs with 'shape:'",
        "spec.yaml:5:36: error: an argument cannot be named 'x_size': the generated code gives "
        "that name to what it derives from 'x'",
        "spec.yaml:7:16: error: 'Sequence' would hide a name the operators' stub imports "
        "(Dtype, Sequence, StreamOrDevice, array)",
    ]


def test_the_caller_gives_the_namespace(tmp_path: Path) -> None:
    spec = "- name: neg\n  signature: array neg(const array& x)\n"
    library = load(tmp_path, spec, namespace="mylib")
    assert (library.namespace, library.module) == ("mylib", "mylib")


def test_a_namespace_the_caller_gives_must_be_the_files(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("- func: mlxlib::neg(Tensor x) -> Tensor\n")
    with pytest.raises(SpecError) as info:
        load_mlx_library(str(path), namespace="other")
    assert str(info.value) == (f"{path}:1:9: error: the spec's namespace is 'mlxlib', not 'other'")


# -- formulas ------------------------------------------------------------------------------


def test_formula_names(tmp_path: Path) -> None:
    spec = (
        "- func: mlxlib::f(Tensor x, Tensor w, float eps=1e-5) -> Tensor\n"
        "  grad:\n"
        "    x: mlx::core::multiply(cotangent, static_cast<float>(eps) * output.shape(0), s)\n"
        "    w: fast::rms_norm(grad, std::nullopt, eps) + mlxlib::f(x, w, eps) + x.dtype().size()"
        " * std::numeric_limits<float>::epsilon()\n"
    )
    assert len(load(tmp_path, spec).operators[0].grads) == 2


def test_formula_errors_point_inside_the_formula(tmp_path: Path) -> None:
    spec = (
        "- func: mlxlib::f(Tensor x, float eps=1e-5) -> Tensor\n"
        "  grad:\n"
        "    x: multiply(grad, expp(x) * epss) + mlxlib::ff(x)\n"
    )
    assert errors(tmp_path, spec) == [
        "spec.yaml:3:23: error: unknown name 'expp' in the gradient formula of 'x'; "
        "did you mean 'exp'?",
        "spec.yaml:3:33: error: unknown name 'epss' in the gradient formula of 'x'; "
        "did you mean 'eps'?",
        "spec.yaml:3:41: error: 'mlxlib::ff' is not an operator of the library; did you mean 'f'?",
    ]


def test_grad_for_a_float_argument(tmp_path: Path) -> None:
    spec = "- func: mlxlib::f(Tensor x, float eps) -> Tensor\n  grad: {eps: grad}\n"
    assert errors(tmp_path, spec) == [
        "spec.yaml:2:10: error: 'eps' is not an array (float): only array inputs have gradients"
    ]


def test_no_formulas_need_no_mlx_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> frozenset[str]:
        raise AssertionError("read MLX's headers without formulas")

    monkeypatch.setattr("opgen.spec.mlx.reader.mlx_names", missing)
    path = tmp_path / "spec.yaml"
    path.write_text("- func: mlxlib::neg(Tensor x) -> Tensor\n")
    assert len(load_mlx_library(str(path)).operators) == 1


# -- mlx::core's names -------------------------------------------------------------------


def test_declared_names_of_a_header() -> None:
    header = """
    namespace mlx::core {
    /** exp(x) */
    MLX_API array exp(const array& a, StreamOrDevice s = {});
    MLX_API std::pair<array, array>
    divmod(const array& a, const array& b, StreamOrDevice s = {});
    inline array ones(const Shape& shape, StreamOrDevice s = {}) {
      return full(shape, array(1), s);
    }
    inline constexpr Dtype float32{Dtype::Val::float32, sizeof(float)};
    struct Dtype { void hidden(); };
    namespace fast {
    MLX_API array rms_norm(const array& x, float eps, StreamOrDevice s = {});
    }
    }
    """
    assert sorted(declared_names(header)) == [
        "Dtype",
        "divmod",
        "exp",
        "fast::rms_norm",
        "float32",
        "ones",
    ]


def test_mlx_names_from_the_installed_headers() -> None:
    if find_mlx_include() is None:
        pytest.skip("MLX is not installed")
    names = mlx_names()
    assert {"exp", "sum", "multiply", "fast::rms_norm", "linalg::inv", "float32", "array"} <= names
    assert "rms_norm" not in names  # only in mlx::core::fast


def test_mlx_names_without_mlx(tmp_path: Path) -> None:
    assert find_mlx_include([str(tmp_path)]) is None
    with pytest.raises(SpecError, match=r"MLX's C\+\+ headers"):
        mlx_names([str(tmp_path)])
