"""Two MLX extension specs, operator by operator: the findings of `opgen diff --mlx`.

An MLX operator's arguments and returns are a `FunctionSchema`, so a matched pair
(by namespace and name) is judged as `findings` judges PyTorch's operators, by torch's
two compatibility checks (`opgen.spec.compat`). Besides the schema: a changed Python
name removes the function Python callers call, which is backward-incompatible; kernels
(`dispatch:`), gradient formulas and `shape:` changes are informational. Bound functions
(existing C++ under MLX's Python conventions) have Python signatures, not schemas: one
removed is backward-incompatible, one added informational, and a changed signature is
listed, informational, not judged. Every finding points at the operator's entry in each
file; they come in the new spec's order (operators, then bound functions), then the
removed ones in the old spec's.
"""

from __future__ import annotations

from collections.abc import Iterator

from opgen.diagnostics import Location
from opgen.frozen import frozen
from opgen.spec.compat import compare_schemas
from opgen.spec.mlx.model import BoundAs, MlxFunction, MlxLibrary, MlxOperator
from opgen.tooling.diff.findings import Finding, category_of, kernel_change, set_change


def diff_mlx_specs(old: MlxLibrary, new: MlxLibrary) -> list[Finding]:
    old_ops = _operators(old)
    new_ops = _operators(new)
    old_functions = {_bound_key(old, f): f for f in old.bound}
    new_functions = {_bound_key(new, f): f for f in new.bound}
    findings: list[Finding] = []
    for key, n in new_ops.items():
        o = old_ops.get(key)
        if o is None:
            message = f"new operator: {n.operator.func}"
            findings.append(
                Finding(key, "informational", "operator-added", message, None, n.location)
            )
        else:
            findings += _changed(key, o, n)
    for key, nf in new_functions.items():
        of = old_functions.get(key)
        if of is None:
            message = "new bound function"
            findings.append(
                Finding(key, "informational", "function-added", message, None, nf.location)
            )
        elif _signatures(of) != _signatures(nf):
            message = "Python signatures: " + _list_change(_signatures(of), _signatures(nf))
            findings.append(
                Finding(
                    key, "informational", "signature-changed", message, of.location, nf.location
                )
            )
    for key, o in old_ops.items():
        if key not in new_ops:
            message = f"operator removed: {o.operator.func}"
            findings.append(_removed(key, "operator-removed", message, o.location))
    for key, of in old_functions.items():
        if key not in new_functions:
            findings.append(
                _removed(key, "function-removed", "bound function removed", of.location)
            )
    return findings


@frozen
class _Operator:
    """An operator and the name Python calls it by."""

    operator: MlxOperator
    python_name: str
    location: Location


def _operators(library: MlxLibrary) -> dict[str, _Operator]:
    """The library's operators by namespace and name."""
    return {
        f"{library.namespace}::{f.operator.func.name}": _Operator(
            f.operator, f.python_name, f.location
        )
        for f in library.functions
        if f.operator is not None and f.bound_as is BoundAs.FUNCTION
    }


def _bound_key(library: MlxLibrary, function: MlxFunction) -> str:
    """`mlx::core::sum`, `mlx::core::linalg.norm`, `mlx::core::array.sum`."""
    return f"{library.namespace}::{function.qualified_name}"


def _removed(name: str, rule: str, message: str, location: Location) -> Finding:
    return Finding(name, "backward-incompatible", rule, message, location, None, ("backward",))


def _changed(name: str, old: _Operator, new: _Operator) -> list[Finding]:
    findings: list[Finding] = []
    o, n = old.operator, new.operator
    if str(o.func) != str(n.func):
        for change in compare_schemas(o.func, n.func):
            findings.append(
                Finding(
                    name,
                    category_of(change),
                    change.rule,
                    change.message,
                    o.location,
                    n.location,
                    tuple(change.breaks),
                )
            )
    if old.python_name != new.python_name:
        message = f"Python name: {old.python_name} -> {new.python_name}"
        findings.append(
            Finding(
                name,
                "backward-incompatible",
                "python-name-changed",
                message,
                o.location,
                n.location,
                ("backward",),
            )
        )
    for rule, message in _metadata_changes(o, n):
        findings.append(Finding(name, "informational", rule, message, o.location, n.location))
    return findings


def _metadata_changes(o: MlxOperator, n: MlxOperator) -> Iterator[tuple[str, str]]:
    if dict(o.dispatch) != dict(n.dispatch):
        yield "dispatch-changed", "dispatch: " + kernel_change(o.dispatch, n.dispatch)
    old_grads = {g.input: g.formula for g in o.grads}
    new_grads = {g.input: g.formula for g in n.grads}
    if old_grads != new_grads:
        changed = sorted(i for i in new_grads if i in old_grads and old_grads[i] != new_grads[i])
        parts = (
            [set_change(set(old_grads), set(new_grads))] if set(old_grads) != set(new_grads) else []
        )
        parts += [f"{i}'s formula changed" for i in changed]
        yield "gradients-changed", "gradients: " + ", ".join(parts)
    if o.shape != n.shape:
        yield "shape-changed", f"shape: {o.shape or 'none'} -> {n.shape or 'none'}"


def _signatures(function: MlxFunction) -> list[str]:
    from opgen.api.mlx_python import signature_texts

    return signature_texts(function)


def _list_change(old: list[str], new: list[str]) -> str:
    parts = [f"+{s}" for s in new if s not in old] + [f"-{s}" for s in old if s not in new]
    return ", ".join(parts) if parts else "reordered"
