"""Lowering specs, read: small lowering specs in, the lowerings they make out.

Each test reads a lowering spec against the small ATen spec below (a few of torch's
operators as its `native_functions.yaml` writes them) and states what the reader
makes of it: which overloads an entry lowers, their promotion, the tags that choose
their shared semantics, what is left out, and how mistakes are reported. The
corpus of mistakes, one per case, is `tests/malformed_lowering/`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen.diagnostics import SpecError
from opgen.spec.lowering.compose import Call, ListOf, Literal, Name, Output, parse_composition
from opgen.spec.lowering.model import BodyKind, LoweringSpec, Promotion
from opgen.spec.lowering.reader import read_lowering
from opgen.spec.model import Spec, load_spec

NATIVE = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add
  tags: [core, pointwise]
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  dispatch:
    CompositeExplicitAutograd: add_
  tags: pointwise
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: add_out
  tags: pointwise
- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add
  tags: [core, pointwise]
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: mul
  tags: [core, pointwise]
- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: mul_out
- func: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: where
  tags: [core, pointwise]
- func: sigmoid(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sigmoid
  tags: [core, pointwise]
- func: silu(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: silu
  tags: [core, pointwise]
- func: amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: amax
  tags: [core, reduction]
- func: amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: amax_out
- func: full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: full
  tags: core
- func: full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: full_out
- func: _fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
  dispatch:
    CompositeExplicitAutograd: _fft_c2r
"""  # noqa: E501
TAGS = """\
- tag: core
  desc: Core ATen operators.
- tag: pointwise
  desc: Pointwise operators.
- tag: reduction
  desc: Reductions.
"""
# mlx::core's names the bodies below use (MLX's headers are not read here).
MLX = frozenset({"add", "multiply", "sigmoid", "max", "full", "float32", "where"})


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Spec:
    folder = tmp_path_factory.mktemp("aten")
    (folder / "native_functions.yaml").write_text(NATIVE)
    (folder / "tags.yaml").write_text(TAGS)
    return load_spec(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))


def read(spec: Spec, tmp_path: Path, *texts: str, module: str | None = None) -> LoweringSpec:
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"{i}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return read_lowering(paths, spec, mlx=MLX, module=module)


def errors(spec: Spec, tmp_path: Path, *texts: str) -> list[str]:
    """Each diagnostic as `file:line:col: message`, the file's directory left out."""
    with pytest.raises(SpecError) as raised:
        read(spec, tmp_path, *texts)
    return [
        f"{d.location}: {d.message}".removeprefix(f"{tmp_path}/") for d in raised.value.diagnostics
    ]


def names(lowering: LoweringSpec) -> list[str]:
    return [lowered.name for lowered in lowering.lowerings]


def test_a_base_name_lowers_every_overload_and_variant_in_spec_order(
    spec: Spec, tmp_path: Path
) -> None:
    lowering = read(spec, tmp_path, "- op: add\n  call: add(self, multiply(other, alpha))\n")
    assert names(lowering) == [
        "aten::add.Tensor",
        "aten::add_.Tensor",
        "aten::add.out",
        "aten::add.Scalar",
    ]
    assert all(lowered.variant_of is None for lowered in lowering.lowerings)


def test_an_overload_lowers_its_in_place_and_out_variants_with_its_body(
    spec: Spec, tmp_path: Path
) -> None:
    lowering = read(spec, tmp_path, "- op: add.Tensor\n  call: add(self, multiply(other, alpha))\n")
    assert names(lowering) == ["aten::add.Tensor", "aten::add_.Tensor", "aten::add.out"]
    functional = lowering.by_name["aten::add.Tensor"].function
    assert lowering.by_name["aten::add.out"].variant_of is functional
    assert lowering.by_name["aten::add.out"].body is lowering.by_name["aten::add.Tensor"].body


def test_a_variant_named_by_its_own_entry_takes_that_entry(spec: Spec, tmp_path: Path) -> None:
    lowering = read(
        spec,
        tmp_path,
        "- op: add.Tensor\n  call: add(self, multiply(other, alpha))\n"
        "- op: add_.Tensor\n  call: add(self, multiply(alpha, other))\n",
    )
    assert lowering.by_name["aten::add_.Tensor"].body.text == "add(self, multiply(alpha, other))"
    assert lowering.by_name["aten::add_.Tensor"].variant_of is None


def test_a_variant_without_an_argument_the_body_reads_is_not_lowered(
    spec: Spec, tmp_path: Path
) -> None:
    """full.out has no `dtype`: the body of full cannot compute it, so only full is lowered
    (and no error: the entry named full, not full.out)."""
    body = (
        "- op: full\n"
        '  call: full(to_shape(op, "size", size), fill_value.as_array(dtype_or(dtype, '
        "float32)), dtype_or(dtype, float32))\n"
    )
    assert names(read(spec, tmp_path, body)) == ["aten::full"]


def test_pointwise_operators_promote_every_tensor_and_scalar_but_alpha(
    spec: Spec, tmp_path: Path
) -> None:
    lowering = read(
        spec,
        tmp_path,
        "- op: add\n  call: add(self, multiply(other, alpha))\n"
        "- op: sigmoid\n  call: sigmoid(self)\n  promotion: int_to_float\n"
        "- op: where.self\n  call: where(condition, self, other)\n  promote: [self, other]\n"
        "- op: amax\n  call: max(self, axes, keepdim)\n",
    )
    by_name = lowering.by_name
    assert (by_name["aten::add.Scalar"].promotion, by_name["aten::add.Scalar"].promoted) == (
        Promotion.DEFAULT,
        ("self", "other"),
    )
    assert by_name["aten::sigmoid"].promotion is Promotion.INT_TO_FLOAT
    assert by_name["aten::where.self"].promoted == ("self", "other")
    assert (by_name["aten::amax"].promotion, by_name["aten::amax"].promoted) == (
        Promotion.NONE,
        (),
    )


def test_a_composition_is_not_promoted_unless_it_says(spec: Spec, tmp_path: Path) -> None:
    """The operators it calls promote their own operands."""
    lowering = read(
        spec,
        tmp_path,
        "- op: mul.Tensor\n  call: multiply(self, other)\n"
        "- op: sigmoid\n  call: sigmoid(self)\n"
        "- op: silu\n  compose: mul.Tensor(self, sigmoid(self))\n",
    )
    silu = lowering.by_name["aten::silu"]
    assert (silu.body.kind, silu.promotion) == (BodyKind.COMPOSE, Promotion.NONE)
    assert silu.body.composition == Call(
        0,
        31,
        "mul.Tensor",
        (Name(11, 4, "self"), Call(17, 13, "sigmoid", (Name(25, 4, "self"),), (), ())),
        (),
        (),
    )


def test_variants_have_their_functional_overloads_tags(spec: Spec, tmp_path: Path) -> None:
    """amax.out has no tags of its own: it is a reduction as amax is, and gets `axes`."""
    lowering = read(spec, tmp_path, "- op: amax\n  call: max(self, axes, keepdim)\n")
    assert names(lowering) == ["aten::amax", "aten::amax.out"]
    assert lowering.by_name["aten::amax.out"].tags == frozenset({"core", "reduction"})


def test_left_out_operators_hold_what_they_leave_out(spec: Spec, tmp_path: Path) -> None:
    lowering = read(
        spec,
        tmp_path,
        "- left_out: _fft_c2r\n  reason: MLX's irfftn takes the output's size\n"
        "- left_out: mul.Tensor\n  reason: not yet\n",
    )
    assert [
        (out.op, out.reason, [str(f.func.name) for f in out.functions]) for out in lowering.left_out
    ] == [
        ("_fft_c2r", "MLX's irfftn takes the output's size", ["_fft_c2r"]),
        ("mul.Tensor", "not yet", ["mul.Tensor", "mul.out"]),
    ]
    assert lowering.lowerings == ()


def test_the_package_name_comes_from_the_files_unless_given(spec: Spec, tmp_path: Path) -> None:
    text = "- module: my_ops\n- op: sigmoid\n  call: sigmoid(self)\n"
    assert read(spec, tmp_path, text).module == "my_ops"
    assert read(spec, tmp_path, text, module="other_ops").module == "other_ops"
    assert read(spec, tmp_path, "- op: sigmoid\n  call: sigmoid(self)\n").module == "aten_mlx"


def test_a_body_knows_where_it_is_written(spec: Spec, tmp_path: Path) -> None:
    """`line` is where the text's first line is: for a block (`|`), the line after the key
    (the generated C++ points there with `#line`)."""
    lowering = read(
        spec,
        tmp_path,
        "- op: sigmoid\n  call: sigmoid(self)\n"
        "- op: mul.Tensor\n  code: |\n    return multiply(self, other);\n",
    )
    assert lowering.by_name["aten::sigmoid"].body.line == 2
    assert lowering.by_name["aten::mul.Tensor"].body.line == 5
    assert lowering.by_name["aten::mul.Tensor"].body.text == "return multiply(self, other);\n"


def test_errors_come_in_the_order_of_the_files_and_their_lines(spec: Spec, tmp_path: Path) -> None:
    """Errors found late (a composition, checked once every lowering is known) and early
    (an unknown operator) are reported in the order they are written."""
    assert errors(
        spec,
        tmp_path,
        "- op: silu\n  compose: mul.Tensor(self, sigmoid(self))\n",
        "- op: mul.Tensor\n  call: multiply(self, other)\n- op: sigmoidd\n  call: sigmoid(self)\n",
    ) == [
        "0.yaml:2:29: 'sigmoid' is not lowered: a composition calls lowered operators only",
        "1.yaml:3:7: the release's spec has no operator 'sigmoidd'; did you mean 'sigmoid'?",
    ]


def test_a_misspelt_argument_is_reported_once(spec: Spec, tmp_path: Path) -> None:
    """`othr` is unknown; that `other` is then never read goes without saying."""
    assert errors(spec, tmp_path, "- op: mul.Tensor\n  call: multiply(self, othr)\n") == [
        "0.yaml:2:24: unknown name 'othr' in the lowering of 'mul.Tensor'; did you mean 'other'?"
    ]


def test_an_argument_never_read_is_an_error_of_the_overload_named(
    spec: Spec, tmp_path: Path
) -> None:
    assert errors(spec, tmp_path, "- op: add.Tensor\n  call: add(self, other)\n") == [
        "0.yaml:2:9: the lowering of 'add.Tensor' never reads 'alpha': a value it cannot "
        "honour must be refused, not ignored (refuse(op, ...) names it)"
    ]


def test_the_composition_language() -> None:
    """Calls, keyword arguments, lists, literals and an output of a call."""
    parsed = parse_composition("max.dim(self, [0, -1], keepdim=True)[1]")
    assert isinstance(parsed, Output)
    assert parsed.index == 1
    call = parsed.of
    assert isinstance(call, Call)
    assert (call.op, call.keyword_offsets) == ("max.dim", (23,))
    assert call.positional[1] == ListOf(
        14, 7, (Literal(15, 1, "int", "0"), Literal(18, 2, "int", "-1"))
    )
    assert call.keywords == (("keepdim", Literal(31, 4, "bool", "True")),)


def test_a_mistaken_option_keeps_its_operator_lowered(spec: Spec, tmp_path: Path) -> None:
    """A misspelt promote: is the one error: the compositions that call the operator are
    not wrong, and say nothing."""
    assert errors(
        spec,
        tmp_path,
        "- op: mul.Tensor\n  call: multiply(self, other)\n  promote: [self, othr]\n"
        "- op: sigmoid\n  call: sigmoid(self)\n"
        "- op: silu\n  compose: mul.Tensor(self, sigmoid(self))\n",
    ) == ["0.yaml:3:19: promote: 'mul.Tensor' has no argument 'othr'; did you mean 'other'?"]
