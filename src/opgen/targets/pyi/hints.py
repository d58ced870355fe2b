"""The stubs the spec gives: `torch.` functions, Tensor methods and structseqs.

The functions with Python bindings (`python_bindings.should_generate_py_binding`)
are paired with their Python signatures, function-style and method-style, the
function-style ones with the deprecated signatures of `deprecated.yaml` too
(the stubs give methods none). The `torch.` functions (no `python_module`, a
function variant) and the Tensor methods (a method variant) are each grouped
and ordered as the bindings parse them, all names at once
(`python_overloads.group_overloads`: the order of a name's overloads can
depend on other names' signatures). Each group gives:

- for a deprecated group with an out= variant, its form without `out`;
- its signature, with `out` when the group has an out= variant;
- the form taking an int list as varargs (`x.view(2, 3)`), where there is one.

Names in `UNDERIVED_NAMES` keep only their deprecated signatures. The stubs
of `torch.` functions also spell two defaults as Python does
(`_stub_spelling`). Every group with named returns that is not deprecated
defines a structseq class, one per name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from opgen.api import pyi
from opgen.api.python import PythonSignatureGroup, PythonSignatureNativeFunctionPair
from opgen.api.signatures import SignatureSet
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.python_bindings.bound import should_generate_py_binding
from opgen.python_bindings.overloads import group_overloads, load_signatures
from opgen.spec.deprecated import DeprecatedSignature
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.targets.pyi.stubs import Stub
from opgen.targets.pyi.torch_functions import UNDERIVED_NAMES


@frozen(eq=False)
class SpecStubs:
    functions: dict[str, list[Stub]]  # torch.<name> -> its declarations
    methods: dict[str, list[Stub]]  # Tensor.<name> -> its declarations
    structseqs: dict[str, str]  # class name -> definition, by name
    hints: pyi.Hints  # the release's words, for the hand-written declarations too


def spec_stubs(
    functions: Sequence[NativeFunction],
    deprecated: Sequence[DeprecatedSignature],
    signatures: SignatureSet,
    hints: pyi.Hints,
) -> SpecStubs:
    """The declarations the spec's functions give; a SpecError for a spec the stubs
    cannot describe (two structseqs of one name that differ)."""
    bound = [f for f in functions if should_generate_py_binding(f)]
    function_pairs = load_signatures(bound, deprecated, signatures, method=False)
    method_pairs = load_signatures(bound, (), signatures, method=True)
    function_groups = _groups(function_pairs, Variant.function)
    method_groups = _groups(method_pairs, Variant.method)
    structseqs: dict[str, tuple[str, PythonSignatureGroup]] = {}
    for group in (*function_groups, *method_groups):
        _add_structseq(structseqs, group, hints)
    return SpecStubs(
        _declarations(function_groups, _stub_spelling, hints),
        _declarations(method_groups, lambda text: text, hints),
        {name: structseqs[name][0] for name in sorted(structseqs)},
        hints,
    )


def _groups(
    pairs: Iterable[PythonSignatureNativeFunctionPair], variant: Variant
) -> list[PythonSignatureGroup]:
    """The groups of the pairs whose function has `variant` and no `python_module`, by name."""
    kept = [p for p in pairs if p.function.python_module is None and variant in p.function.variants]
    return sorted(group_overloads(kept), key=lambda g: g.signature.name)


def _declarations(
    groups: Iterable[PythonSignatureGroup], spelling: Callable[[str], str], hints: pyi.Hints
) -> dict[str, list[Stub]]:
    by_name: dict[str, list[Stub]] = {}
    for group in groups:
        stubs = by_name.setdefault(group.signature.name, [])
        stubs += (Stub(spelling(text), callable=True) for text in group_definitions(group, hints))
    return by_name


def group_definitions(group: PythonSignatureGroup, hints: pyi.Hints) -> list[str]:
    """The definitions one group of overloads contributes (see the module docstring)."""
    signature = group.signature
    if signature.name in UNDERIVED_NAMES and not signature.deprecated:
        return []
    without_out = group.outplace is None
    definitions = []
    if signature.deprecated and not without_out:
        definitions.append(signature.signature_str_pyi(hints, skip_outputs=True))
    definitions.append(signature.signature_str_pyi(hints, skip_outputs=without_out))
    vararg = signature.signature_str_pyi_vararg(hints, skip_outputs=without_out)
    if vararg is not None:
        definitions.append(vararg)
    return definitions


# Spellings the `.pyi` signatures share with the bindings that the stubs of
# `torch.` functions write as Python does: the default reduction is the value
# of `at::Reduction::Mean`, and an out argument not named `out` may be None too.
_PYTHON_SPELLINGS = (
    ("at::Reduction::Mean", "1"),
    (": Tensor = None", ": Tensor | None = None"),
)


def _stub_spelling(definition: str) -> str:
    for cpp, python in _PYTHON_SPELLINGS:
        definition = definition.replace(cpp, python)
    return definition


def _add_structseq(
    structseqs: dict[str, tuple[str, PythonSignatureGroup]],
    group: PythonSignatureGroup,
    hints: pyi.Hints,
) -> None:
    if group.signature.deprecated:
        return
    structseq = group.signature.returns_structseq_pyi(hints)
    if structseq is None:
        return
    name, definition = structseq
    earlier = structseqs.setdefault(name, (definition, group))
    if earlier[0] != definition:
        raise SpecError(
            f"the named returns of '{group.base.func.name}' differ from those of "
            f"'{earlier[1].base.func.name}', and the stubs have one class "
            f"torch.return_types.{name} for both",
            group.base.location_of("func"),
        )
