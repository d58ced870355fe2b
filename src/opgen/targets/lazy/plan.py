"""Every IR node and kernel of a lazy backend, planned whole before any is rendered.

For each `full_codegen` and `ir_gen` operator, in upstream's order (`functions_of`),
the plan holds its node's schema in the lazy IR convention (`opgen.api.lazy`), made
once, and for a `full_codegen` operator its kernel: the backend's metadata and the
`compute_shape_*` function it calls, if any, which the shape-inference header must
declare (`checks`). The kernel shares the node's schema: both are SymInt-aware exactly
when the backend's kernel is. The `non_native:` entries' nodes are planned too.

An operator the lazy IR cannot express is a SpecError at its YAML entry, raised once
the whole plan is made: first each kernel's problem, then each node's, then each
`non_native:` entry's, as upstream would meet them.
"""

from __future__ import annotations

from collections.abc import Iterator, Set

from opgen.api.lazy import LazyIrSchema, UnsupportedLazyOperator
from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.targets.backend.files import BackendRun, Position, members
from opgen.targets.lazy.kernels import kernel_metadata, shape_inference_declaration
from opgen.targets.lazy.nodes import node_schema, non_native_schema


@frozen(eq=False)
class PlannedKernel:
    """A `full_codegen` operator's generated kernel."""

    metadata: BackendMetadata  # the backend's kernel
    shape_declaration: str | None  # the `compute_shape_*` it calls; None: from a meta kernel


@frozen(eq=False)
class PlannedOperator:
    """One operator's IR node, and its kernel if it is generated."""

    function: NativeFunction
    position: Position  # where its texts go in the whole spec's order
    location: Location  # its entry in the backend YAML
    schema: LazyIrSchema  # its node's, and its kernel's
    kernel: PlannedKernel | None


@frozen(eq=False)
class PlannedNonNative:
    """A `non_native:` entry's node."""

    schema: LazyIrSchema
    location: Location


@frozen(eq=False)
class LazyPlan:
    """What a lazy backend's files hold, per operator, in upstream's order."""

    index: BackendIndex  # the backend key's
    operators: tuple[PlannedOperator, ...]  # the full_codegen and ir_gen operators
    non_native: tuple[PlannedNonNative, ...]


def plan(run: BackendRun, value_class: str) -> LazyPlan:
    """The plan of the operators of `run` (the whole spec, or a part of it)."""
    backend = run.backend
    assert backend.backend_key is not None, "a lazy backend has kernels"
    index = backend.indices[backend.backend_key]
    generated = {op.name for op in backend.full_codegen}
    where = {op.name: op.location for op in (*backend.full_codegen, *backend.ir_gen)}
    kernel_errors: list[Diagnostic] = []
    node_errors: list[Diagnostic] = []
    operators: list[PlannedOperator] = []
    for f, position in functions_of(run, where.keys()):
        name = f.func.name
        schema: LazyIrSchema | None = None
        problem: UnsupportedLazyOperator | None = None
        try:
            schema = node_schema(f, index, value_class)
        except UnsupportedLazyOperator as e:
            problem = e
        kernel = None
        if name in generated:
            try:
                metadata = kernel_metadata(f, index)
                if problem is not None:  # the kernel passes every argument on to its node
                    raise problem
                kernel = PlannedKernel(metadata, shape_inference_declaration(f, metadata))
            except UnsupportedLazyOperator as e:
                kernel_errors.append(located(f, where[name], e))
        if schema is None:
            assert problem is not None
            node_errors.append(located(f, where[name], problem))
        else:
            operators.append(PlannedOperator(f, position, where[name], schema, kernel))
    non_native: list[PlannedNonNative] = []
    non_native_errors: list[Diagnostic] = []
    for node in backend.non_native:
        try:
            schema = non_native_schema(node.func, node.properties, node.opkind, value_class)
            non_native.append(PlannedNonNative(schema, node.location))
        except UnsupportedLazyOperator as e:
            non_native_errors.append(Diagnostic(node.location, str(e)))
    errors = [*kernel_errors, *node_errors, *non_native_errors]
    if errors:
        raise SpecError.of(errors)
    return LazyPlan(index, tuple(operators), tuple(non_native))


def functions_of(
    run: BackendRun, names: Set[OperatorName]
) -> Iterator[tuple[NativeFunction, Position]]:
    """The functions named, in upstream's order (the grouped spec sorted by the name of each
    item's functional operator, then each item's functions), with their item's position."""
    for item, position in zip(run.items, run.positions, strict=True):
        for f in members(item):
            if f.func.name in names:
                yield f, position


def located(f: NativeFunction, at: Location, e: UnsupportedLazyOperator) -> Diagnostic:
    """The problem at the operator's YAML entry, naming the operator once."""
    message = str(e) if f"'{f.func.name}'" in str(e) else f"'{f.func.name}': {e}"
    return Diagnostic(at, message)
