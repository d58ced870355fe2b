"""Which kernels each dispatch key gets (`opgen.targets.aten.dispatch_plan`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api.signatures import SignatureSet
from opgen.api.translate import call_arguments, translate
from opgen.diagnostics import SpecError
from opgen.spec import Spec
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import DispatchKey
from opgen.targets.aten.dispatch_plan import KernelTable
from opgen.targets.aten.options import AtenOptions

SpecFromText = Callable[[str], Spec]

K = DispatchKey

SPEC = """
- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: neg_out
    SparseCPU: neg_out_sparse
- func: neg(Tensor self) -> Tensor
  structured_delegate: neg.out
- func: neg_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: neg.out
- func: fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
  dispatch:
    CPU: fill_
- func: zero_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: zero_
- func: ones.sym(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CPU: ones_sym
"""
# Keys exist (have an index) only if some entry names them.
WITH_META_AND_COMPOSITE = """
- func: abs(Tensor self) -> Tensor
  dispatch:
    Meta: abs_meta
    CompositeExplicitAutogradNonFunctional: abs_composite
"""


def _spec(spec_of: SpecFromText, extra: str = WITH_META_AND_COMPOSITE) -> Spec:
    return spec_of(SPEC + extra)


def _plans(spec: Spec, key: DispatchKey) -> list[tuple[str, str]]:
    plan = KernelTable.of(spec, AtenOptions().dispatch_keys).plan(key)
    return [(str(p.f.func.name), p.mode.value) for item in plan.items for p in item.kernels]


def test_meta_derives_every_structured_member_and_checks_inplace_without_composite(
    spec_of: SpecFromText,
) -> None:
    assert _plans(_spec(spec_of), K.Meta) == [
        ("neg", "structured"),
        ("neg.out", "structured"),
        ("neg_", "structured"),
        ("fill_.Scalar", "inplace_meta"),  # zero_ has a composite kernel: none
        ("abs", "kernel"),
    ]


def test_a_key_without_kernels_derives_nothing(spec_of: SpecFromText) -> None:
    # torchgen's index of a key no entry names says `Undefined`, which is not Meta.
    spec = _spec(spec_of, extra="")
    assert _plans(spec, K.Meta) == []
    assert _plans(spec, K.CompositeExplicitAutogradNonFunctional) == []


def test_composite_non_functional_derives_all_but_out(spec_of: SpecFromText) -> None:
    spec = _spec(spec_of)
    plans = _plans(spec, K.CompositeExplicitAutogradNonFunctional)
    assert plans == [("neg", "structured"), ("neg_", "structured"), ("abs", "kernel")]


def test_a_backend_is_structured_only_where_its_out_kernel_is(spec_of: SpecFromText) -> None:
    spec = _spec(spec_of)
    assert _plans(spec, K.CPU) == [
        ("neg", "structured"),
        ("neg.out", "structured"),
        ("neg_", "structured"),
        ("fill_.Scalar", "kernel"),
        ("ones.sym", "kernel"),
    ]
    # SparseCPU's kernel of a structured operator is unstructured: only out= is there.
    assert _plans(spec, K.SparseCPU) == [("neg.out", "kernel")]
    assert _plans(spec, K.CUDA) == []


def test_call_arguments_agree_with_translate(spec_of: SpecFromText) -> None:
    signatures = SignatureSet()
    for f in _spec(spec_of).functions:
        sigs = signatures.of(f)
        native = sigs.native(BackendMetadata("kernel_symint", False, "at::native"))
        pairs = [(sigs.dispatcher.parameters, native.parameters)]
        pairs += [(s.parameters, sigs.dispatcher.parameters) for s in sigs.cpp.signatures()]
        for source, goal in pairs:
            expected = ", ".join(e.expr for e in translate(source.bindings, goal.bindings))
            assert call_arguments(source.bindings, goal.bindings) == expected


def test_a_structured_operator_naming_a_generated_kernel_is_an_error(
    spec_of: SpecFromText,
) -> None:
    options = AtenOptions()
    spec = spec_of(
        """
        - func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPU: neg_out
            Meta: neg_meta
        - func: neg(Tensor self) -> Tensor
          structured_delegate: neg.out
        """
    )
    with pytest.raises(SpecError) as caught:
        KernelTable.of(spec, options.dispatch_keys)
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.location.line, diagnostic.message) == (
        5,
        "'neg.out' is structured, so its Meta kernel is generated; remove 'Meta' from its dispatch",
    )
