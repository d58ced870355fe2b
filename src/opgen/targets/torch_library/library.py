"""A custom-op library: the spec, its gradient formulas, and every check made before generating.

`load_library` reads the spec in the library dialect (`opgen.spec.library`)
and the derivatives file, then checks what only the whole library can tell:
one namespace, Python kernels that resolve to definitions, gradient formulas
the target can turn into kernels, Python names that do not collide. Every
problem is a located diagnostic; the emitters trust the `Library` they get.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.spec.arguments import Argument
from opgen.spec.backend import BackendMetadata
from opgen.spec.derivatives import DerivativesEntry, FormulaHeader, load_library_derivatives
from opgen.spec.keys import DispatchKey, SchemaKind
from opgen.spec.library import PythonRef
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.native import NativeFunction
from opgen.spec.types import BaseTy
from opgen.targets.contract import RunOptions
from opgen.targets.torch_library.formula_calls import formula_errors
from opgen.targets.torch_library.formula_names import formula_name_errors
from opgen.targets.torch_library.python_types import (
    UnsupportedType,
    python_signature,
    result_class,
)

K = DispatchKey
# Keys whose kernels run on real data; an operator with one needs a fake kernel
# (a Meta kernel or `fake:`) or a composite one for tracing.
_DATA_KEYS = (K.CPU, K.CUDA)
_TRACEABLE_KEYS = (K.Meta, K.CompositeImplicitAutograd, K.CompositeExplicitAutograd)
# Keys the dispatcher reaches only through a tensor argument's device, or a BackendSelect
# kernel; composite kernels are reached without either.
_BACKEND_KEYS = (K.CPU, K.CUDA, K.Meta)
_COMPOSITE_KEYS = (K.CompositeImplicitAutograd, K.CompositeExplicitAutograd)


@frozen
class LibraryPaths:
    spec: str
    tags: str | None = None
    derivatives: str | None = None
    package: str | None = None  # the Python package's name; default: the namespace
    python_path: tuple[str, ...] = ()  # where Python kernels live; default: the spec's directory
    release: Release = NEWEST  # the torch built against: its tags (at::Tag) are known


@frozen
class TorchLibraryOptions:
    """The flags of one `opgen torch-library` run."""

    paths: LibraryPaths
    run: RunOptions  # -o/--output-dir is its output directory


@frozen
class Library:
    namespace: str
    package: str
    spec: Spec
    derivatives: Mapping[str, DerivativesEntry[NativeFunction]]  # by qualified operator name
    compiled: bool  # has C++ code: kernels, or gradient formulas in C++
    warnings: tuple[Diagnostic, ...] = ()
    formula_headers: tuple[FormulaHeader, ...] = ()  # `include:` entries of the derivatives

    def summary(self) -> str:
        """`mylib: 3 operators, 2 with gradient formulas (C++ and Python)`."""
        kinds = "C++ and Python" if self.compiled else "Python only"
        count = len(self.operators)
        return (
            f"{self.namespace}: {count} operator{'' if count == 1 else 's'}, "
            f"{len(self.derivatives)} with gradient formulas ({kinds})"
        )

    @property
    def operators(self) -> tuple[NativeFunction, ...]:
        return self.spec.functions

    def kernels(self, f: NativeFunction) -> Mapping[DispatchKey, BackendMetadata]:
        return self.spec.kernels(f)

    def derivative(self, f: NativeFunction) -> DerivativesEntry[NativeFunction] | None:
        return self.derivatives.get(qualified_name(f))

    def backend_selected(self, f: NativeFunction) -> bool:
        """Whether `f` gets a BackendSelect kernel: a factory (no tensor argument) with
        backend kernels, which the dispatcher reaches only by its `device` argument."""
        return bool(_backend_keys(self.spec, f)) and device_argument(f) is not None


def qualified_name(f: NativeFunction) -> str:
    return f"{f.namespace}::{f.func.name}"


def device_argument(f: NativeFunction) -> Argument | None:
    """The argument a factory's backend is chosen by: its first `Device` or `Device?`."""
    return next(
        (a for a in f.func.arguments.flat_all if a.type.is_base_ty_like(BaseTy.Device)), None
    )


def _backend_keys(spec: Spec, f: NativeFunction) -> list[DispatchKey]:
    """The backend keys of a factory's kernels (C++ or Python); [] for other operators."""
    if any(a.type.is_tensor_like() for a in f.func.arguments.flat_all):
        return []
    keys = (*spec.kernels(f), *f.extensions.python_kernels)
    return [k for k in _BACKEND_KEYS if k in keys]


def python_name(f: NativeFunction) -> str:
    """The generated Python function: `rms_norm`, or `scale_out` for overload `scale.out`."""
    name = f.func.name
    return f"{name.name}_{name.overload_name}" if name.overload_name else str(name.name)


def load_library(paths: LibraryPaths) -> Library:
    """Read and check a library; raises SpecError with every diagnostic found."""
    spec = load_spec(paths.spec, paths.tags, LoadOptions(library=True, release=paths.release))
    namespace = _namespace(spec)
    derivatives: dict[str, DerivativesEntry[NativeFunction]] = {}
    headers: tuple[FormulaHeader, ...] = ()
    errors: list[Diagnostic] = []
    if paths.derivatives is not None:
        try:  # its errors are reported with the spec's other errors
            read = load_library_derivatives(paths.derivatives, spec.functions)
        except SpecError as e:
            errors.extend(e.diagnostics)
        else:
            derivatives = {qualified_name(d.function): d for d in read.derivatives}
            headers = read.headers
    compiled = any(spec.kernels(f) for f in spec.functions)
    roots = paths.python_path or (os.path.dirname(os.path.abspath(paths.spec)),)
    errors += [
        *_check_python_refs(spec, roots),
        *_check_python_api(spec),
        *_check_derivatives(spec, derivatives, compiled),
        *formula_errors(spec, namespace, derivatives.values(), headers, compiled),
        *formula_name_errors(derivatives.values(), headers, compiled),
        *_check_factories(spec),
    ]
    if errors:
        raise SpecError.of(errors[:20])
    return Library(
        namespace=namespace,
        package=paths.package or namespace,
        spec=spec,
        derivatives=derivatives,
        compiled=compiled,
        warnings=(*spec.warnings, *_fake_warnings(spec, derivatives)),
        formula_headers=headers,
    )


def _namespace(spec: Spec) -> str:
    if not spec.functions:
        raise SpecError("the library defines no operator")
    first = spec.functions[0].namespace
    for f in spec.functions:
        if f.namespace != first:
            raise SpecError(
                f"every operator of a library is in one namespace: '{first}' (from the first "
                f"operator), not '{f.namespace}'",
                f.location_of("func").shifted(0, len(f.namespace)),
            )
    return first


def _check_python_refs(spec: Spec, roots: tuple[str, ...]) -> Iterator[Diagnostic]:
    modules: dict[str, frozenset[str] | str] = {}
    for f in spec.functions:
        ext = f.extensions
        refs = [*ext.python_kernels.values(), *([ext.fake] if ext.fake else [])]
        for ref in refs:
            problem = _resolve(ref, roots, modules)
            if problem is not None:
                yield Diagnostic(
                    ref.location, f"Python function '{ref}' does not resolve: {problem}"
                )


def _resolve(
    ref: PythonRef, roots: tuple[str, ...], modules: dict[str, frozenset[str] | str]
) -> str | None:
    """Why `ref` names no top-level definition of a module under `roots`, or None."""
    found = modules.get(ref.module)
    if found is None:
        found = modules[ref.module] = _module_names(ref.module, roots)
    if isinstance(found, str):
        return found
    if ref.function not in found:
        hint = did_you_mean(ref.function, found, cutoff=0.85)  # a typo, not a sibling kernel
        return f"module '{ref.module}' defines no '{ref.function}'{hint}"
    return None


def _module_names(module: str, roots: tuple[str, ...]) -> frozenset[str] | str:
    """The names a module's top level defines, or why it cannot be read."""
    parts = module.split(".")
    for root in roots:
        base = Path(root, *parts)
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file():
                try:
                    tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
                except (SyntaxError, UnicodeDecodeError, ValueError) as e:
                    return f"{file} is not valid Python ({e})"
                return frozenset(_top_level_names(tree))
    where = ", ".join(roots)
    return f"no module '{module}' under {where} (set the Python path with --python-path)"


def _top_level_names(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name).partition(".")[0]


def _check_python_api(spec: Spec) -> Iterator[Diagnostic]:
    """Every operator gets a Python function; their names must not collide."""
    seen: dict[str, NativeFunction] = {}
    for f in spec.functions:
        try:
            named = result_class(f)
            python_signature(f)
        except UnsupportedType as e:
            yield Diagnostic(f.location_of("func"), str(e))
            continue
        names = {python_name(f): "function", **({named.name: "result class"} if named else {})}
        for name, what in names.items():
            if name in seen:
                yield _error(
                    f"the Python {what} for '{f.func.name}' would be '{name}', as for "
                    f"'{seen[name].func.name}'; rename one of them",
                    f.location_of("func"),
                )
            seen[name] = f


def _check_derivatives(
    spec: Spec, derivatives: Mapping[str, DerivativesEntry[NativeFunction]], compiled: bool
) -> Iterator[Diagnostic]:
    for d in derivatives.values():
        f = d.function
        kernels = spec.kernels(f)
        name = qualified_name(f)
        if K.Autograd in kernels:
            yield _error(
                f"'{name}' has an Autograd kernel in its dispatch table and gradient formulas; "
                "keep one of them",
                d.location,
            )
        elif K.CompositeImplicitAutograd in kernels:
            yield _error(
                f"'{name}' has a CompositeImplicitAutograd kernel: its gradient comes from the "
                "operators the kernel calls, so it takes no formulas",
                d.location,
            )
        elif f.func.kind is not SchemaKind.functional or f.is_view_op:
            yield _error(
                f"gradient formulas are supported on functional operators only, and "
                f"'{name}' mutates or aliases its inputs",
                d.location,
            )
        elif any(str(r.type) != "Tensor" for r in f.func.returns):
            yield _error(
                f"gradient formulas are supported on operators that return tensors only, and "
                f"'{name}' returns '{_returns_text(f)}'",
                d.location,
            )
        elif compiled and any(str(a.type) == "Tensor[]" for a in f.func.arguments.flat_all):
            yield _error(
                f"gradient formulas for operators with Tensor[] arguments ('{name}') are not "
                "supported in C++",
                d.location,
            )


def _check_factories(spec: Spec) -> Iterator[Diagnostic]:
    """A factory's backend kernels are unreachable without a device argument to select them
    by (the dispatcher picks a backend by the tensor arguments' devices)."""
    for f in spec.functions:
        backends = _backend_keys(spec, f)
        keys = (*spec.kernels(f), *f.extensions.python_kernels)
        if backends and device_argument(f) is None and not any(k in keys for k in _COMPOSITE_KEYS):
            names = [str(k) for k in backends]
            named = " and ".join([", ".join(names[:-1]), names[-1]] if names[:-1] else names)
            kernels = "kernels" if len(names) > 1 else "kernel"
            yield _error(
                f"'{qualified_name(f)}' has no tensor or device argument, so no call reaches its "
                f"{named} {kernels}: register its kernel as CompositeExplicitAutograd, or add an "
                "argument 'Device? device=None' to choose the backend by",
                f.location_of("func"),
            )


def _returns_text(f: NativeFunction) -> str:
    return str(f.func).rpartition(") -> ")[2]


def _fake_warnings(
    spec: Spec, derivatives: Mapping[str, DerivativesEntry[NativeFunction]]
) -> Iterator[Diagnostic]:
    for f in spec.functions:
        if f.func.is_mutable and not f.func.returns:
            continue  # PyTorch derives its fake kernel (custom operators change no metadata)
        keys = set(spec.kernels(f)) | set(f.extensions.python_kernels)
        if keys & set(_DATA_KEYS) and not keys & set(_TRACEABLE_KEYS) and f.extensions.fake is None:
            yield _warning(
                f"'{qualified_name(f)}' has no fake kernel (a Meta kernel or 'fake:'), so "
                "torch.compile and opcheck cannot trace it",
                f.location_of("func"),
            )


def _error(message: str, location: Location | None) -> Diagnostic:
    return Diagnostic(location, message)


def _warning(message: str, location: Location | None) -> Diagnostic:
    return Diagnostic(location, message, "warning")
