"""Comparing opgen's derivatives model with upstream's converted one (`torchgen_autograd`).

Each function returns the first difference, readably, or None. Where upstream's
value depends on set iteration order (the inputs a forward formula needs; the
saved values of a derived foreach info) only the members are compared; a
binding's argument is compared without its alias annotation (a view-copy info
shares its view's bindings, which the converter finds in the copy's schema).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from opgen.api.types import Binding
from opgen.autograd.model import (
    DifferentiabilityInfo,
    ForwardDerivative,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.spec.arguments import Argument, SelfArgument


def _argument(b: Binding) -> object:
    """A binding's argument without its alias annotation.

    A view-copy info shares its view's bindings, whose arguments are the view's
    (annotated); the converter finds them in the copy's schema (plain).
    """
    a = b.argument.argument if isinstance(b.argument, SelfArgument) else b.argument
    if isinstance(a, Argument):
        return (a.name, a.type, a.default)
    return a


def _binding(b: Binding) -> object:
    return (b.name, b.nctype, b.default, _argument(b))


def _forward(d: ForwardDerivative) -> object:
    def members(names: tuple[str, ...] | None) -> object:
        return None if names is None else sorted(names)

    plain = dataclasses.replace(d, required_inputs_fw_grad=None, required_inputs_primal=None)
    return plain, members(d.required_inputs_fw_grad), members(d.required_inputs_primal)


def info_difference(ours: DifferentiabilityInfo, theirs: DifferentiabilityInfo) -> str | None:
    """The first field in which two infos differ, shown both ways; None if equal."""
    derived_foreach = (ours.op or "").startswith("Foreach")
    for field in dataclasses.fields(ours):
        if not field.compare:
            continue
        a, b = getattr(ours, field.name), getattr(theirs, field.name)
        if field.name == "func":
            same = a is b
        elif field.name == "args_with_derivatives":
            same = [_binding(x) for x in a] == [_binding(x) for x in b]
        elif field.name == "forward_derivatives":
            same = [_forward(x) for x in a] == [_forward(x) for x in b]
        elif field.name.startswith("all_saved_") and derived_foreach:
            same = len(a) == len(b) and set(a) == set(b)  # upstream: set order
        else:
            same = a == b
        if not same:
            return f"{field.name}:\n  opgen:    {a!r}\n  torchgen: {b!r}"
    return None


def infos_difference(
    ours: Mapping[str, DifferentiabilityInfo], theirs: Mapping[str, DifferentiabilityInfo]
) -> str | None:
    if list(ours) != list(theirs):
        return f"dispatch keys: opgen {list(ours)}, torchgen {list(theirs)}"
    for key in ours:
        found = info_difference(ours[key], theirs[key])
        if found is not None:
            return f"[{key}] {found}"
    return None


def matched_difference(
    ours: Sequence[NativeFunctionWithDifferentiabilityInfo],
    theirs: Sequence[NativeFunctionWithDifferentiabilityInfo],
) -> str | None:
    if [fn.func.func for fn in ours] != [fn.func.func for fn in theirs]:
        return "the functions differ (or their order)"
    for a, b in zip(ours, theirs, strict=True):
        where = str(a.func.func)
        if (a.info is None) != (b.info is None):
            return f"{where}: info is None for {'opgen' if a.info is None else 'torchgen'}"
        if a.info is not None and b.info is not None:
            found = infos_difference(a.info, b.info)
            if found is not None:
                return f"{where}: {found}"
        if (a.fw_derivatives is None) != (b.fw_derivatives is None):
            return f"{where}: fw_derivatives is None for one side"
        if a.fw_derivatives is not None and b.fw_derivatives is not None:
            ours_fw = {k: [_forward(d) for d in v] for k, v in a.fw_derivatives.items()}
            theirs_fw = {k: [_forward(d) for d in v] for k, v in b.fw_derivatives.items()}
            if ours_fw != theirs_fw:
                return f"{where}: fw_derivatives:\n  opgen:    {ours_fw}\n  torchgen: {theirs_fw}"
    return None
