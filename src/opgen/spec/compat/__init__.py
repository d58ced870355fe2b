"""Compatibility of two schemas of one operator, decided as PyTorch decides it.

PyTorch guards its operators with `FunctionSchema::isBackwardCompatibleWith`
(callers and serialized programs written against the old schema still work
with the new one) and `isForwardCompatibleWith` (programs written against the
new schema still run on the old one). This package re-implements both checks
over opgen's schema model, check for check, and explains each failure:

- `values`: what torch compares of a type (fake types and subtyping), a
  default (the parsed value, not the text) and an alias annotation;
- `names`: why two argument lists differ at an index (a rename, a removal, an
  insertion, a move);
- `changes`: what a comparison reports, `SchemaChange` (a change and the directions it
  breaks) and the schema parts it points at;
- `schemas`: `compare_schemas(old, new)`, every change as a `SchemaChange`
  with the directions it breaks; a direction is compatible exactly when no
  change breaks it, which is torch's verdict (the conformance test checks it
  on thousands of operators);
- `notes`: the changes that break nothing, reported for information.
"""

from __future__ import annotations

from opgen.spec.compat.changes import Direction, Part, SchemaChange
from opgen.spec.compat.schemas import (
    compare_schemas,
    is_backward_compatible,
    is_forward_compatible,
)

__all__ = [
    "Direction",
    "Part",
    "SchemaChange",
    "compare_schemas",
    "is_backward_compatible",
    "is_forward_compatible",
]
