"""A run's `BindingMemo`: what it shares between functions, and that sharing changes no text."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api import cpp, pyi
from opgen.api.signatures import FunctionSignatures, SignatureSet
from opgen.api.types import BindingMemo
from opgen.releases import Release
from opgen.spec import Spec

HINTS = pyi.hints_for(Release(2, 13))  # the hints of torch 2.13's stubs

SpecOf = Callable[[str], Spec]

# Two overloads with one argument list (parsing shares the `Arguments` object),
# their out= variants, a factory and a method.
SPEC = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
- func: sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros_symint
- func: min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
"""  # noqa: E501


def declarations(spec: Spec, sigs: FunctionSignatures) -> list[str]:
    """Every text `opgen dump --signatures` shows of one function, and a few more."""
    groups = [sigs.cpp] + ([sigs.cpp_method] if sigs.cpp_method is not None else [])
    texts = [s.decl() for group in groups for s in group.signatures()]
    texts += [s.defn() for group in groups for s in group.signatures()]
    texts += [sigs.dispatcher.decl(), sigs.dispatcher.defn(), sigs.dispatcher.type()]
    for m in spec.kernels(sigs.f).values():
        texts += [sigs.native(m).decl(m.kernel), sigs.native(m).ptr_type()]
    python = sigs.python()
    texts += [python.signature_str(), python.signature_str_pyi(HINTS)]
    return texts


def test_a_shared_memo_renders_what_no_memo_renders(spec_of: SpecOf) -> None:
    spec = spec_of(SPEC)
    signature_set = SignatureSet()
    for f in spec.functions:
        shared = declarations(spec, signature_set.of(f))
        assert shared == declarations(spec, FunctionSignatures(f))


def test_functions_with_one_argument_list_share_its_parameters(spec_of: SpecOf) -> None:
    add, _, sub, *_ = spec_of(SPEC).functions
    assert add.func.arguments is sub.func.arguments
    signature_set = SignatureSet()
    add_sigs, sub_sigs = signature_set.of(add), signature_set.of(sub)
    assert add_sigs.cpp.signature.parameters is sub_sigs.cpp.signature.parameters
    assert add_sigs.dispatcher.parameters is sub_sigs.dispatcher.parameters
    assert add_sigs.python().input_args is sub_sigs.python().input_args
    # Without a memo, each signature builds its own.
    assert FunctionSignatures(add).dispatcher.parameters is not add_sigs.dispatcher.parameters


def test_a_functions_cpp_signatures_share_one_result(spec_of: SpecOf) -> None:
    spec = spec_of(SPEC)
    f = spec.functions[0]
    sigs = SignatureSet().of(f)
    (kernel,) = spec.kernels(f).values()
    assert sigs.cpp.signature.result is sigs.dispatcher.result is sigs.native(kernel).result
    assert sigs.cpp.signature.result.text == "at::Tensor"


def test_returns_without_a_cpp_type_fail_only_when_rendered(spec_of: SpecOf) -> None:
    spec = spec_of(
        "- func: pack(Tensor self) -> __torch__.torch.classes.quantized.Conv2dPackedParamsBase\n"
    )
    sigs = SignatureSet().of(spec.functions[0])
    assert sigs.dispatcher.name() == "pack"
    with pytest.raises(cpp.NoCppType, match=r"has no C\+\+ type"):
        sigs.dispatcher.decl()


def test_derived_is_once_per_object_and_convention() -> None:
    memo = BindingMemo()
    calls: list[tuple[object, str]] = []

    def derive(source: tuple[int, ...], suffix: str) -> str:
        calls.append((source, suffix))
        return f"{len(source)}{suffix}"

    first, equal = (1, 2), tuple([1, 2])  # equal, but not the same object
    assert memo.derived(first, "a", derive, "!") == "2!"
    assert memo.derived(first, "a", derive, "?") == "2!"  # found: `convention` says it all
    assert memo.derived(first, "b", derive, "?") == "2?"
    assert memo.derived(equal, "a", derive, "+") == "2+"
    assert calls == [(first, "!"), (first, "?"), (equal, "+")]


def test_python_signatures_compare_without_their_memo(spec_of: SpecOf) -> None:
    f = spec_of(SPEC).functions[0]
    assert SignatureSet().of(f).python() == FunctionSignatures(f).python()


@pytest.mark.parametrize("length", [79, 80, 81])
def test_format_function_signature_splits_past_80_columns(length: int) -> None:
    parameters = ["a: int", "b" * (length - len("def f(a: int, : int) -> int: ...")) + ": int"]
    one_line = f"def f({', '.join(parameters)}) -> int: ..."
    assert len(one_line) == length
    text = pyi.format_function_signature("f", parameters, "int")
    if length <= pyi.MAX_LINE:
        assert text == one_line
    else:
        assert text == "def f(\n    a: int,\n    " + parameters[1] + ",\n) -> int: ..."
