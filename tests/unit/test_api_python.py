"""The Python argument-parser and `.pyi` forms (`opgen.api.python`, `opgen.api.pyi`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api import pyi, python
from opgen.api.python import PythonSignatureNativeFunctionPair, deprecated_signatures
from opgen.releases import Release
from opgen.spec import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Type

HINTS = pyi.hints_for(Release(2, 13))  # the hints of torch 2.13's stubs

FunctionOf = Callable[[str], NativeFunction]
SpecOf = Callable[[str], Spec]


def test_parser_signature_renames_self_and_packs_out(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)"
        " -> Tensor(a!)"
    )
    sig = python.signature(f)
    assert (
        sig.signature_str() == "add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)"
    )
    assert (
        sig.signature_str(skip_outputs=True) == "add(Tensor input, Tensor other, *, Scalar alpha=1)"
    )
    assert python.signature(f, method=True).signature_str() == (
        "add(Tensor other, *, Scalar alpha=1, Tensor out=None)"
    )
    assert sig.signature_str_pyi(HINTS) == (
        "def add(\n"
        "    input: Tensor,\n"
        "    other: Tensor,\n"
        "    *,\n"
        "    alpha: Number | _complex = 1,\n"
        "    out: Tensor | None = None,\n"
        ") -> Tensor: ..."
    )
    assert python.signature(f, method=True).signature_str_pyi(HINTS).splitlines()[:2] == [
        "def add(",
        "    self,",
    ]


def test_factories_take_tensor_options_keywords(spec_of: SpecOf) -> None:
    f = spec_of(
        "- func: eye(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor\n"
        "  dispatch:\n    CompositeExplicitAutograd: eye"
    ).functions[0]
    sig = python.signature(f)
    assert sig.signature_str() == (
        "eye(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=False, bool? requires_grad=False)"
    )
    assert [a.default_init for a in sig.tensor_options_args] == [
        None,
        None,
        "torch::tensors::get_default_device()",
        None,
        None,
    ]
    # Too long for one line: one parameter per line.
    assert sig.signature_str_pyi(HINTS) == (
        "def eye(\n"
        "    n: _int | SymInt,\n"
        "    *,\n"
        "    dtype: _dtype | None = None,\n"
        "    layout: _layout | None = None,\n"
        "    device: DeviceLikeType | None = None,\n"
        "    pin_memory: _bool | None = False,\n"
        "    requires_grad: _bool | None = False,\n"
        ") -> Tensor: ..."
    )


def test_several_outputs_are_one_tuple_and_named_returns_a_structseq(
    function_of: FunctionOf,
) -> None:
    f = function_of(
        "- func: max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
        "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)"
    )
    sig = python.signature(f)
    assert sig.signature_str() == (
        "max(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)"
    )
    assert sig.returns_str_pyi(HINTS) == "torch.return_types.max"
    structseq = sig.returns_structseq_pyi(HINTS)
    assert structseq is not None
    assert structseq[1].splitlines()[:3] == [
        "class max(tuple[Tensor, Tensor]):  # fmt: skip",
        "    @property",
        "    def values(self) -> Tensor: ...",
    ]


def test_vararg_form_for_a_lone_int_list(function_of: FunctionOf) -> None:
    f = function_of("- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)\n  variants: method")
    sig = python.signature(f, method=True)
    assert sig.signature_str_pyi_vararg(HINTS) == (
        "def view(self, *size: _int | SymInt) -> Tensor: ..."
    )
    assert python.signature(f).signature_str_pyi_vararg(HINTS) is None  # two positionals


def test_reserved_and_inexpressible_signatures_raise(function_of: FunctionOf) -> None:
    f = function_of("- func: f(Tensor self, bool requires_grad) -> Tensor")
    with pytest.raises(ValueError, match="requires_grad"):
        python.signature(f)
    g = function_of("- func: g(Tensor self) -> (Tensor a, Tensor)")
    with pytest.raises(ValueError, match="structseq"):
        python.signature(g).signature_str_pyi(HINTS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int[]", "_size"),
        ("int[2]", "_int | _size"),
        ("SymInt[2]", "_int | SymInt | Sequence[_int | SymInt]"),
        ("Tensor?[]", "tuple[Tensor | None, ...] | list[Tensor | None] | None"),
        ("Tensor[]?", "tuple[Tensor, ...] | list[Tensor] | None"),
        ("Device?", "DeviceLikeType | None"),
        ("float[]", "Sequence[_float]"),
        ("Scalar?", "Number | _complex | None"),
    ],
)
def test_pyi_argument_types(text: str, expected: str) -> None:
    assert pyi.argument_type_str(Type.parse(text), HINTS) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1e-5", "1e-05"), ("true", "True"), ("0.5", "0.5"), ("{}", "{}"), ("10", "10")],
)
def test_pythonify_default(text: str, expected: str) -> None:
    assert python.pythonify_default(text) == expected


def test_format_function_signature_falls_back_to_fmt_skip() -> None:
    long = "x" * 90
    assert pyi.format_function_signature("f", [f"{long}: int"], "None") == (
        f"def f(\n    {long}: int,\n) -> None:  # fmt: skip\n    ..."
    )
    assert pyi.format_function_signature("f", ["self"], "None") == "def f(self) -> None: ..."


def test_deprecated_signature_binds_to_the_matching_operator(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)"
        " -> Tensor"
    )
    pairs = [PythonSignatureNativeFunctionPair(python.signature(f), f) for f in spec.functions]
    schema = FunctionSchema.parse(
        "addmm(Scalar beta, Tensor self, Tensor mat1, Tensor mat2) -> Tensor"
    )
    (found,) = deprecated_signatures(
        pairs, schema, "addmm(self, mat1, mat2, beta, 1)", method=False
    )
    assert found.signature.signature_str() == (
        "addmm(Scalar beta, Tensor input, Tensor mat1, Tensor mat2)|deprecated"
    )
    assert found.signature.signature_str_pyi(HINTS) == (
        "def addmm(\n"
        "    beta: Number | _complex,\n"
        "    self: Tensor,\n"
        "    mat1: Tensor,\n"
        "    mat2: Tensor,\n"
        ") -> Tensor: ..."
    )
    with pytest.raises(ValueError, match="unknown value 'gamma'"):
        deprecated_signatures(pairs, schema, "addmm(self, mat1, mat2, gamma)", method=False)
