"""A backend YAML of real size, written from a spec, for bench_backend.py.

torch_xla's YAML, the largest backend YAML in use, lists about 400 operators: 95
with generated kernels and IR (`full_codegen`), 10 with IR only (`ir_gen`) and
289 with hand-written kernels (`supported`). `write_backend_yaml` writes one of
that make-up from whatever spec it is given, so that the benchmark measures a
real-size run on every torch release without a copy of torch_xla's file:

- `full_codegen` and `ir_gen` take functional operators the lazy generator can
  infer shapes for (structured ones, or ones with a `compute_shape_` declaration
  in the shape-inference header) and whose arguments its IR can hold;
- `supported` takes other functional operators.

As in torch_xla's YAML, an operator family (`add`, `add.Scalar`, `add.Tensor`)
is listed with all its overloads that qualify. Families are taken evenly across
the spec, in spec order, so every run of a release picks the same ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from opgen.releases import NEWEST, Release
from opgen.spec import LoadOptions, load_spec
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.partial import family

FULL_CODEGEN = 95
IR_GEN = 10
SUPPORTED = 289

# Argument types the lazy IR nodes of torchgen hold (no lists of optional tensors,
# no Dimnames, no Storage, no Stream).
_UNSUPPORTED_TYPE = re.compile(r"Tensor\?\[\]|Dimname|Storage|Stream|Layout|Device|MemoryFormat")


def write_backend_yaml(
    native: Path, tags: Path, header: Path, path: Path, release: Release = NEWEST
) -> Path:
    """Write a torch_xla-sized backend YAML for `release`'s spec `native` into `path`."""
    spec = load_spec(str(native), str(tags), LoadOptions(release=release))
    shapes = set(re.findall(r"compute_shape_(\w+)\(", header.read_text()))
    functional = [f for f in spec.functions if _candidate(f)]
    inferable = [f for f in functional if _inferable(f, shapes)]
    lazy = _by_family(inferable, FULL_CODEGEN + IR_GEN)
    taken = {f.func.name for f in lazy}
    rest = _by_family([f for f in functional if f.func.name not in taken], SUPPORTED)
    lines = ["backend: XLA", "cpp_namespace: torch_xla", "full_codegen:"]
    lines += [f"  - {f.func.name}" for f in lazy[:FULL_CODEGEN]]
    lines += ["ir_gen:", *(f"  - {f.func.name}" for f in lazy[FULL_CODEGEN:])]
    lines += ["supported:", *(f"  - {f.func.name}" for f in rest)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _candidate(f: NativeFunction) -> bool:
    return (
        f.namespace == "aten"
        and f.func.kind is SchemaKind.functional
        and not f.is_view_op
        and "generated" not in f.tags
        and not str(f.func.name).startswith("_")
        and not f.has_composite_implicit_autograd_kernel
        and f.func.returns != ()
        and all(str(r.type) == "Tensor" for r in f.func.returns)
        and not _UNSUPPORTED_TYPE.search(str(f.func.arguments))
    )


def _inferable(f: NativeFunction, shapes: set[str]) -> bool:
    return f.structured_delegate is not None or str(f.func.name.name) in shapes


def _by_family(functions: Sequence[NativeFunction], count: int) -> list[NativeFunction]:
    """`count` of `functions`: whole families, taken evenly across the spec."""
    families: dict[str, list[NativeFunction]] = {}
    for f in functions:
        families.setdefault(family(str(f.func.name)), []).append(f)
    groups = list(families.values())
    stride = max(1.0, len(functions) / count)  # in functions, as families hold them
    chosen: list[NativeFunction] = []
    seen = 0.0
    for group in groups:
        if seen >= len(chosen) * stride:
            chosen.extend(group[: count - len(chosen)])
        seen += len(group)
    return chosen
