"""The rules between a kernel YAML's operators, which torchgen checks when it reads them.

No operator twice (upstream indexes kernels, and torchgen dispatch tables, by
the name without namespace, so `my_ops::foo` and `aten::foo` are the same
operator), a `structured_delegate` that names a structured operator of the
file, argument names that are not Python keywords, and an `inplace_view`
operator's naming (torchgen's `error_check_native_functions`, as
`opgen.spec.model.rules_between_entries`, shared with the spec's reading).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.diagnostics import Diagnostic
from opgen.spec.model import index_entries, rules_between_entries
from opgen.spec.native import NativeFunction


def check_across_entries(functions: Sequence[NativeFunction]) -> list[Diagnostic]:
    """Every error between the operators of one file."""
    by_name, by_base, errors = index_entries(functions, _duplicate)
    errors.extend(rules_between_entries(functions, by_name, by_base))
    return errors


def _duplicate(f: NativeFunction, first: NativeFunction) -> Diagnostic:
    also = (
        ""
        if f.namespace == first.namespace
        else f" (as '{first.namespace}::{first.func.name}': kernels are indexed by the "
        "name without namespace)"
    )
    return Diagnostic(
        f.schema_location(0, len(str(f.func.name))),
        f"operator '{f.func.name}' is already in this file, on line {first.loc.line}{also}",
    )
