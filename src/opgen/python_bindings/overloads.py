"""The overloads one Python name parses: which signatures, merged how, tried in what order.

A binding (`torch.add`, `Tensor.max`) covers every function of one base name
(`add` covers `add.Tensor` and `add.out`; `add_` and `__iadd__` are other
names). Its functions are paired with their Python signatures
(`load_signatures`), plus the deprecated signatures of `deprecated.yaml`
bound to the functions they call. Then:
- a function and its out= variant whose signatures agree but for `out` are
  one signature with an optional `out` (`group_overloads`); two functions
  with the same signature, or an out= variant without its functional one,
  are errors;
- `PythonArgParser` tries the signatures in order and takes the first that
  parses, so the order resolves ambiguity (`sort_overloads`): sorted by
  signature text, then an overload that accepts what another does, and more,
  goes after it. A Python number also parses as a Tensor and a 0-dim tensor
  as a Scalar, so `Tensor` goes before `Scalar`; `int` before `int[]`;
  `int[]` before `SymInt[]`; `Tensor` before `int`/`SymInt`; any type before a
  named dimension (`Dimname`, `Dimname[]`...); and `Tensor[]`, whose parsing
  throws rather than fail, after any other list.

Facts from torchgen/packaged/autograd/gen_python_functions.py.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from opgen.api.python import (
    PythonSignatureGroup,
    PythonSignatureNativeFunctionPair,
    deprecated_signatures,
)
from opgen.api.signatures import SignatureSet
from opgen.diagnostics import SpecError
from opgen.spec.deprecated import DeprecatedSignature, load_deprecated_signatures
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName

Pair = PythonSignatureNativeFunctionPair


def load_signatures(
    functions: Iterable[NativeFunction],
    deprecated: Sequence[DeprecatedSignature],
    signatures: SignatureSet,
    *,
    method: bool,
    partial: bool = False,
) -> list[Pair]:
    """Each function with its Python signature (method-style with `method`), in order, then
    each deprecated signature bound to the functions its call matches; a SpecError for a
    function the bindings cannot express or a deprecated signature that matches nothing.

    With `partial`, `functions` is a part of the spec (the methods, say): a deprecated
    signature may match none of them, since it matches some function outside the part.
    """
    pairs = []
    for f in functions:
        try:
            pairs.append(Pair(signatures.of(f).python(method=method), f))
        except ValueError as e:
            at = f.location_of("func")
            raise SpecError(f"no Python binding for {f.func.name}: {e}", at) from None
    return pairs + bind_deprecated(pairs, deprecated, method=method, partial=partial)


def load_deprecated(path: str) -> tuple[DeprecatedSignature, ...]:
    """The entries of a `deprecated.yaml` (spec/deprecated.py); raises SpecError."""
    return load_deprecated_signatures(path)


def bind_deprecated(
    pairs: Sequence[Pair],
    deprecated: Sequence[DeprecatedSignature],
    *,
    method: bool,
    partial: bool = False,
) -> list[Pair]:
    """The deprecated signatures, each bound to every function of `pairs` its call matches
    (see `load_signatures` for `partial`)."""
    by_name: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_name[pair.signature.name].append(pair)
    bound = []
    for d in deprecated:
        candidates = by_name.get(d.operator)
        if not candidates:
            if partial:
                continue
            raise SpecError(
                f"'aten:' calls '{d.function}', but no function named '{d.operator}' has a "
                "Python binding",
                d.call_location.shifted(0, len(d.function)),
            )
        try:
            bound += deprecated_signatures(candidates, d.schema, d.call, method=method)
        except ValueError:
            if not partial:
                raise _no_match(d, candidates) from None
    return bound


def _no_match(d: DeprecatedSignature, candidates: Sequence[Pair]) -> SpecError:
    names = ", ".join(dict.fromkeys(str(p.function.func.name) for p in candidates))
    return SpecError(
        f"'aten:' matches none of the functions named '{d.operator}' ({names}): the "
        "arguments it passes must have the types of the function's first arguments (out "
        "arguments first for '_out'), its other arguments defaults, and the returns must be "
        "the deprecated signature's",
        d.call_location,
    )


def group_by_name(
    pairs: Iterable[Pair], keep: Callable[[NativeFunction], bool]
) -> dict[BaseOperatorName, list[Pair]]:
    """The pairs whose function `keep` accepts, by base name, in order of first appearance."""
    grouped: dict[BaseOperatorName, list[Pair]] = defaultdict(list)
    for pair in pairs:
        if keep(pair.function):
            grouped[pair.function.func.name.name].append(pair)
    return dict(grouped)


def group_overloads(
    overloads: Sequence[Pair], *, symint: bool = True
) -> list[PythonSignatureGroup]:
    """Each functional overload merged with the out= one of the same signature, sorted."""
    return [group for _, group in parse_order(overloads, symint=symint)]


def parse_order(
    overloads: Sequence[Pair], *, symint: bool = True
) -> list[tuple[str, PythonSignatureGroup]]:
    """`group_overloads`, each group with its signature string (`signature_str`)."""
    bases: dict[str, Pair] = {}
    outs: dict[str, Pair] = {}
    for pair in overloads:
        key = pair.signature.signature_str(skip_outputs=True, symint=symint)
        same_kind = outs if pair.function.func.is_out_fn() else bases
        first = same_kind.setdefault(key, pair)
        if first is not pair:
            raise SpecError(
                f"'{pair.function.func.name}' has the same Python signature as "
                f"'{first.function.func.name}': {key}",
                pair.function.location_of("func"),
            )
    for key, out in outs.items():
        if key not in bases:
            raise _out_without_functional(out, key, overloads, symint)
    texted = []
    for key, base in bases.items():
        outplace = outs.get(key)
        if outplace is None:  # then the signature has no outputs to skip
            texted.append((key, PythonSignatureGroup.from_pairs(base, None)))
        else:
            group = PythonSignatureGroup.from_pairs(base, outplace)
            texted.append((group.signature.signature_str(symint=symint), group))
    return _sorted(texted)


def _out_without_functional(
    out: Pair, key: str, overloads: Sequence[Pair], symint: bool
) -> SpecError:
    name = out.function.func.name.name
    candidates = [
        f"\n- {p.signature.signature_str(skip_outputs=True, symint=symint)}"
        for p in overloads
        if p.function.func.name.name == name
        and not p.function.func.is_out_fn()
        and not p.signature.deprecated
    ]
    return SpecError(
        f"the out= overload '{out.function.func.name}' has no functional overload with the "
        f"same Python signature, {key}; the functional ones are:{''.join(candidates) or ' none'}",
        out.function.location_of("func"),
    )


# Argument types (as written) an overload taking the second type goes before: (first, second).
_PARSED_AFTER = frozenset(
    {
        ("Scalar", "Tensor"),
        ("Scalar?", "Tensor?"),
        ("int[]", "int"),
        ("int[]", "int?"),
        ("SymInt[]", "int[]"),
        ("SymInt", "Tensor"),
        ("int", "Tensor"),
    }
)


def _parsed_after(t1: str, t2: str) -> bool:
    """Whether an argument of type `t1` must be tried after one of type `t2`."""
    return (
        (t1, t2) in _PARSED_AFTER
        or (t1 == "Tensor[]" and "[]" in t2)
        # A named-dimension overload is the fallback: any other type is tried first.
        or ("Dimname" in t1 and "Dimname" not in t2)
    )


def _tried_later(types1: tuple[str, ...], types2: tuple[str, ...]) -> bool:
    """Whether a signature of argument types `types1` (outputs aside) accepts all one of
    `types2` does, argument by argument, and more."""
    if len(types1) != len(types2) or types1 == types2:
        return False
    return all(t1 == t2 or _parsed_after(t1, t2) for t1, t2 in zip(types1, types2, strict=True))


def sort_overloads(
    groups: Sequence[PythonSignatureGroup], *, symint: bool = True
) -> list[PythonSignatureGroup]:
    """By signature text, then each group after every group it is tried later than."""
    texted = [(g.signature.signature_str(symint=symint), g) for g in groups]
    return [group for _, group in _sorted(texted)]


def _sorted(
    texted: list[tuple[str, PythonSignatureGroup]],
) -> list[tuple[str, PythonSignatureGroup]]:
    """`sort_overloads` of groups given with their signature strings."""
    ordered = sorted(texted, key=_text)
    if len(ordered) < 2:
        return ordered
    types = [
        tuple([str(a.type) for a in g.signature.arguments(skip_outputs=True)]) for _, g in ordered
    ]
    later = _tried_after(types)
    if not later:
        return ordered
    # Kahn's algorithm, visiting the waiting groups in index order after each placed one.
    placed = [i for i in range(len(ordered)) if i not in later]
    for i in placed:  # grows while it is walked
        for j in sorted(later):
            waiting = later[j]
            waiting.discard(i)
            if not waiting:
                del later[j]
                placed.append(j)
    return [ordered[i] for i in placed]


def _tried_after(types: Sequence[tuple[str, ...]]) -> dict[int, set[int]]:
    """For each signature (by its argument types) tried after others, their indices.

    The relation depends only on the types, and relates only signatures with as
    many arguments: each distinct tuple is compared with those of its length.
    """
    indices: dict[tuple[str, ...], list[int]] = {}
    for j, types2 in enumerate(types):
        indices.setdefault(types2, []).append(j)
    same_length: dict[int, list[tuple[str, ...]]] = {}
    for distinct in indices:
        same_length.setdefault(len(distinct), []).append(distinct)
    after = {
        types1: [
            j
            for types2 in same_length[len(types1)]
            if _tried_later(types1, types2)
            for j in indices[types2]
        ]
        for types1 in indices
    }
    return {i: set(after[types1]) for i, types1 in enumerate(types) if after[types1]}


def _text(texted: tuple[str, PythonSignatureGroup]) -> str:
    return texted[0]
