"""What `opgen lazy` checks beyond the backend YAML's own rules.

- Each `non_native` entry's properties are lazy IR node properties
  (`opgen.api.lazy.LAZY_IR_PROPERTIES`).
- The shape-inference header declares, each on a line of its own, the
  `compute_shape_<kernel>` function of every generated kernel that cannot
  take its shapes from a meta kernel, as upstream checks it (the header is
  read relative to the working directory, where upstream reads it).
"""

from __future__ import annotations

from opgen.api.lazy import LAZY_IR_PROPERTIES
from opgen.diagnostics import Diagnostic, SpecError
from opgen.spec.external_backend import ExternalBackend
from opgen.spec.yaml.load import read_text
from opgen.targets.lazy.plan import LazyPlan


def check_properties(backend: ExternalBackend) -> None:
    errors = []
    for node in backend.non_native:
        for name, at in zip(node.properties, node.property_locations, strict=True):
            if name not in LAZY_IR_PROPERTIES:
                import difflib  # only for a bad spec

                close = difflib.get_close_matches(name, sorted(LAZY_IR_PROPERTIES), n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                known = ", ".join(sorted(LAZY_IR_PROPERTIES))
                errors.append(
                    Diagnostic(at, f"unknown IR node property '{name}'; {hint}known: {known}")
                )
    if errors:
        raise SpecError.of(errors)


def check_shape_inference_header(plan: LazyPlan, header: str) -> None:
    """SpecError unless the header (`--shape-inference-hdr`) declares every `compute_shape_*`
    function the planned kernels call."""
    lines = set(read_text(header).split("\n"))
    errors = []
    for op in plan.operators:
        declaration = None if op.kernel is None else op.kernel.shape_declaration
        if declaration is not None and declaration not in lines:
            errors.append(
                Diagnostic(
                    op.location,
                    f"{header} does not declare the shape function the generated kernel of "
                    f"'{op.function.func.name}' calls; declare it there, on a line of its own, "
                    f"and define it: {declaration}",
                )
            )
    if errors:
        raise SpecError.of(errors)
