"""Reading an MLX extension spec, in either dialect, into an `MlxLibrary`.

A spec file is a list of operator entries, all in one dialect: entries with
`func:` are opgen's spec language (`spec_language`), entries with `name:` the
MLX dialect (`mlx_dialect`); mixing them in one file is an error. The file may
open with an entry of library settings, in either dialect:

    - namespace: mlxlib      # the C++ namespace of the operators
      module: _mlxlib        # the Python extension module (default: the namespace)

In opgen's spec language the namespace is also written before every schema
(`mlxlib::rms_norm(...)`), and all must agree with each other and with a
`namespace:` entry. The MLX dialect takes it from the `namespace:` entry, else
from the caller (`load_mlx_library(namespace=...)`); a namespace the caller
gives must agree with the file's. The module name the caller gives wins over
the file's (it is a choice of the build, not of the operators).

Gradient formulas come from `grad:` mappings or from a derivatives file: the
one the caller names, by default `derivatives.yaml` beside the spec if there is
one (`derivatives`). Every error is a located `SpecError`; the reader
reports every bad entry of a file at once (at most 20 diagnostics), then the
checks across entries, then the formulas, whose names are checked against
`mlx::core`'s (`mlx_ops`, or the installed headers: `mlx_headers.mlx_names`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import replace
from opgen.spec.mlx.derivatives import Derivatives, derivatives_file
from opgen.spec.mlx.methods import AT_PREFIX, VARIANTS_KEY, at_problem, operator_variants, variants
from opgen.spec.mlx.mlx_dialect import (
    MLX_KEYS,
    entry_name,
    is_bound,
    read_bound_entry,
    read_mlx_entry,
)
from opgen.spec.mlx.mlx_headers import find_mlx_include, mlx_names
from opgen.spec.mlx.model import MlxFunction, MlxLibrary
from opgen.spec.mlx.operators import (
    SHARED_KEYS,
    ReadOperator,
    SharedKeys,
    build_functions,
    formula_problems,
    grad_problems,
    name_problem,
    operator_problems,
    python_name_problem,
    read_shared_keys,
)
from opgen.spec.mlx.spec_language import (
    BOUND_SPEC_KEYS,
    FUNC,
    SpecBound,
    is_bound_spec,
    read_bound_spec_entry,
    read_spec_entry,
)
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml

if TYPE_CHECKING:  # read only where a derivatives file is
    from opgen.spec.derivatives import Formula

LIBRARY_KEYS = ("namespace", "module")
_DIALECT_KEYS = {FUNC: (FUNC, *BOUND_SPEC_KEYS, VARIANTS_KEY), "name": MLX_KEYS}
_DIALECT_NAMES = {FUNC: "opgen's spec language", "name": "the MLX dialect"}
# Namespaces the generated code uses, and whose they are.
_RESERVED_NAMESPACES = {"std": "C++", "mlx": "MLX", "nb": "nanobind", "nanobind": "nanobind"}
_MAX_ERRORS = 20
_MLX = "mlx::core"


def load_mlx_library(
    path: str,
    *,
    namespace: str | None = None,
    module: str | None = None,
    mlx_ops: frozenset[str] | None = None,
    derivatives: str | Derivatives | None = Derivatives.BESIDE_SPEC,
) -> MlxLibrary:
    """Read and check the MLX spec at `path`; raises SpecError with every diagnostic.

    `mlx_ops`: the names `mlx::core` declares, for checking formulas (default:
    read from MLX's installed headers, when a formula needs them).
    `derivatives`: the derivatives file to read (None: none; default: the one
    beside the spec, if any); a file that does not exist is a located error.
    """
    read = derivatives_file(path, derivatives)
    return _Reader(load_yaml(path), namespace, module, mlx_ops, derivatives=read).read()


class _Reader:
    def __init__(
        self,
        doc: YamlDocument,
        namespace: str | None,
        module: str | None,
        mlx_ops: frozenset[str] | None,
        derivatives: str | None = None,  # the derivatives file to read, if any
    ) -> None:
        self.doc = doc
        self.namespace = namespace
        self.module = module
        self.mlx_ops = mlx_ops
        self.derivatives = derivatives
        self.errors: list[Diagnostic] = []

    def read(self) -> MlxLibrary:
        entries = self._entries()
        settings = entries.pop(0) if entries and _is_settings(entries[0]) else None
        if settings is not None:
            self._check_settings(settings)
        dialect = self._dialect(entries)
        ops: list[ReadOperator] = []
        functions: list[MlxFunction] = []
        spec_bounds: list[tuple[SpecBound, SharedKeys, YamlMap]] = []
        namespaces: list[tuple[str, Location]] = []
        for entry in entries:
            try:
                self._check_keys(entry, dialect)
                keys = read_shared_keys(entry)
                if dialect == FUNC and is_bound_spec(entry):
                    bound = read_bound_spec_entry(entry)
                    namespaces.append((bound.namespace, bound.namespace_location))
                    spec_bounds.append((bound, keys, entry))
                    continue
                if dialect == FUNC:
                    namespace, at, op = read_spec_entry(entry, keys)
                    namespaces.append((namespace, at))
                    op = operator_variants(entry, op)
                elif is_bound(entry):
                    submodule, name = _bound_name(entry)
                    functions += read_bound_entry(entry, name, keys, submodule)
                    continue
                else:
                    _check_not_in_submodule(entry)
                    op = operator_variants(entry, read_mlx_entry(entry, keys))
                ops.append(op)
            except SpecError as e:
                self.errors.extend(e.diagnostics)
        self._raise()
        try:
            functions += _grouped(spec_bounds)
        except SpecError as e:
            self.errors.extend(e.diagnostics)
        namespace = self._namespace(settings, namespaces, generates_code=bool(ops))
        module = self._module(settings, namespace)
        self._raise()
        self._check_unique(ops, functions)
        for op in ops:
            self.errors.extend(operator_problems(op))
        self._raise()
        ops = self._with_derivatives(ops, namespace)
        self._check_formulas(ops, namespace)
        self._check_calls(functions, ops, namespace)
        self._raise()
        built = [f for op in ops for f in build_functions(op)]
        return MlxLibrary(namespace, module, (*built, *functions), self.doc.path)

    def _raise(self) -> None:
        if self.errors:
            raise SpecError.of(self.errors[:_MAX_ERRORS])

    def _entries(self) -> list[YamlMap]:
        root = self.doc.root
        if root is None:
            raise SpecError(
                "the file is empty; an MLX spec is a list of operator entries", self.doc.location
            )
        if not isinstance(root, YamlList):
            raise SpecError(
                "an MLX spec is a list of operator entries ('- func: ...' or '- name: ...')",
                self.doc.location,
            )
        for i, entry in enumerate(root):
            if not isinstance(entry, YamlMap):
                self.errors.append(
                    Diagnostic(root.item_locations[i], "an operator entry must be a mapping")
                )
            elif i > 0 and _is_settings(entry):
                self.errors.append(
                    Diagnostic(
                        entry.location,
                        "library settings ('namespace:', 'module:') go in the first entry",
                    )
                )
        self._raise()
        return [entry for entry in root if isinstance(entry, YamlMap)]

    def _check_settings(self, settings: YamlMap) -> None:
        for key in settings:
            if key not in LIBRARY_KEYS:
                self.errors.append(
                    Diagnostic(
                        settings.key_location(key),
                        f"unknown key '{key}' in the library settings, which has "
                        f"{' and '.join(LIBRARY_KEYS)}; operators are entries of their own",
                    )
                )

    def _dialect(self, entries: Sequence[YamlMap]) -> str:
        """`func` or `name`: the key that starts the file's first operator entry."""
        first: tuple[str, YamlMap] | None = None
        for entry in entries:
            keys = [k for k in _DIALECT_KEYS if k in entry]
            if len(keys) == 2:
                self.errors.append(
                    Diagnostic(
                        entry.key_location("name"),
                        "an entry has 'func:' (opgen's spec language) or 'name:' (the MLX "
                        "dialect), not both",
                    )
                )
            elif not keys:
                at, hint = entry.location, ""
                for key in entry:  # a misspelt `func:` or `name:`
                    hint = did_you_mean(str(key), _DIALECT_KEYS)
                    if hint:
                        at = entry.key_location(key)
                        break
                self.errors.append(
                    Diagnostic(
                        at,
                        "an operator entry needs 'func:' (opgen's spec language) or 'name:' "
                        f"(the MLX dialect){hint}",
                    )
                )
            elif first is None:
                first = keys[0], entry
            elif keys[0] != first[0]:
                self.errors.append(
                    Diagnostic(
                        entry.key_location(keys[0]),
                        f"this file is in {_DIALECT_NAMES[first[0]]} (its first operator, on "
                        f"line {first[1].line}, has '{first[0]}:'), and this entry has "
                        f"'{keys[0]}:', of {_DIALECT_NAMES[keys[0]]}; write a file in one "
                        "dialect",
                    )
                )
        self._raise()
        return FUNC if first is None else first[0]

    def _check_keys(self, entry: YamlMap, dialect: str) -> None:
        allowed = (*_DIALECT_KEYS[dialect], *SHARED_KEYS)
        other = "name" if dialect == FUNC else FUNC
        errors = []
        for key in entry:
            if key in allowed:
                continue
            if key in _DIALECT_KEYS[other]:
                message = (
                    f"'{key}:' belongs to {_DIALECT_NAMES[other]} (entries with '{other}:'), "
                    f"not to entries with '{dialect}:'"
                )
            elif key in LIBRARY_KEYS:
                message = (
                    f"'{key}:' is a library setting: it goes in an entry of its own, first in "
                    f"the file ('- {key}: ...')"
                )
            else:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                message = f"unknown key '{key}'; {hint}an entry has: {', '.join(allowed)}"
            errors.append(Diagnostic(entry.key_location(key), message))
        if errors:
            raise SpecError.of(errors)

    def _namespace(
        self,
        settings: YamlMap | None,
        written: Sequence[tuple[str, Location]],
        *,
        generates_code: bool,
    ) -> str:
        given: list[tuple[str, Location]] = list(written)
        if settings is not None and "namespace" in settings:
            value = settings["namespace"]
            at = settings.value_location("namespace")
            if not isinstance(value, str):
                self.errors.append(Diagnostic(at, "'namespace:' must be a C++ namespace name"))
                return ""
            given.insert(0, (value, at))
        if not given:
            if self.namespace is not None:
                return self._checked_namespace(self.namespace, self.doc.location, generates_code)
            self.errors.append(
                Diagnostic(
                    self.doc.location,
                    "the spec does not say its C++ namespace: start it with an entry "
                    "'- namespace: mylib'",
                )
            )
            return ""
        first, first_at = given[0]
        for namespace, at in given[1:]:
            if namespace != first:
                self.errors.append(
                    Diagnostic(
                        at,
                        f"namespace '{namespace}' differs from '{first}' (line {first_at.line}): "
                        "a library has one",
                    )
                )
        if self.namespace is not None and self.namespace != first:
            self.errors.append(
                Diagnostic(first_at, f"the spec's namespace is '{first}', not '{self.namespace}'")
            )
        return self._checked_namespace(first, first_at, generates_code)

    def _checked_namespace(self, namespace: str, at: Location, generates_code: bool) -> str:
        """A namespace the generated operators go in; only bound functions (which call
        into it) may name a nested or a reserved one, such as `mlx::core`."""
        parts = namespace.split("::") if not generates_code else [namespace]
        problem = next((p for p in map(name_problem, parts) if p is not None), None)
        if problem is None and generates_code and namespace in _RESERVED_NAMESPACES:
            problem = f"'{namespace}' is {_RESERVED_NAMESPACES[namespace]}'s namespace"
        if problem is not None:
            self.errors.append(Diagnostic(at, f"{problem}: choose another namespace"))
        return namespace

    def _module(self, settings: YamlMap | None, namespace: str) -> str:
        module: object
        if self.module is not None:
            module, at = self.module, self.doc.location
        elif settings is not None and "module" in settings:
            module, at = settings["module"], settings.value_location("module")
        else:
            return namespace
        problem = python_name_problem(module)
        if problem is not None:
            self.errors.append(Diagnostic(at, f"{problem}: the module needs a Python name"))
        return str(module)

    def _check_unique(self, ops: Sequence[ReadOperator], functions: Sequence[MlxFunction]) -> None:
        at = at_problem(functions)
        if at is not None:
            self.errors.extend(at.diagnostics)
        names: dict[str, ReadOperator] = {}
        python_names: dict[str, ReadOperator] = {}
        bound: dict[str, MlxFunction] = {}
        for function in functions:
            first_bound = bound.setdefault(function.qualified_name, function)
            if first_bound is not function:
                self.errors.append(
                    Diagnostic(
                        function.location,
                        f"a second function '{function.qualified_name}' (the first is on line "
                        f"{first_bound.location.line}); write several signatures of one name "
                        "as 'overloads:'",
                    )
                )
        for function in functions:
            clash = bound.get(function.submodule)
            if function.submodule and clash is not None:
                self.errors.append(
                    Diagnostic(
                        clash.location,
                        f"'{function.submodule}' is a function and a submodule (line "
                        f"{function.location.line}): a module has one of a name",
                    )
                )
                bound.pop(function.submodule)  # reported once
        for op in ops:
            first = names.setdefault(op.name, op)
            if first is not op:
                self.errors.append(
                    Diagnostic(
                        op.name_location,
                        f"a second operator '{op.name}' (the first is on line "
                        f"{first.location.line}); MLX operators have no overloads",
                    )
                )
                continue
            if op.python_name in bound:
                self.errors.append(
                    Diagnostic(
                        op.python_name_location,
                        f"'{op.python_name}' is also a bound function (line "
                        f"{bound[op.python_name].location.line})",
                    )
                )
            first = python_names.setdefault(op.python_name, op)
            if first is not op:
                self.errors.append(
                    Diagnostic(
                        op.python_name_location,
                        f"'{op.name}' and '{first.name}' (line {first.location.line}) are both "
                        f"bound to Python as '{op.python_name}'",
                    )
                )
        declared = _declared_for(ops)
        for op in ops:
            if op.name in declared:
                what, owner = declared[op.name]
                self.errors.append(
                    Diagnostic(
                        op.name_location,
                        f"'{op.name}' is the name of {what} '{owner.name}' (line "
                        f"{owner.location.line}): rename the operator",
                    )
                )

    def _with_derivatives(self, ops: list[ReadOperator], namespace: str) -> list[ReadOperator]:
        if self.derivatives is None:
            return ops
        from opgen.spec.derivatives import Dialect, load_library_derivatives

        ops = [replace(op, namespace=namespace) for op in ops]
        read = load_library_derivatives(self.derivatives, ops, Dialect.MLX)
        found: dict[str, tuple[Formula, ...]] = {}  # by operator
        errors = []
        for entry in read.derivatives:
            inline = entry.function.keys.grad_location
            if inline is not None:
                errors.append(
                    Diagnostic(
                        entry.location,
                        f"'{entry.name}' has its formulas in the spec ('grad:' on line "
                        f"{inline.line}); give them in one place",
                    )
                )
            found[entry.function.name] = entry.formulas
        if errors:
            raise SpecError.of(errors[:_MAX_ERRORS])
        ops = [replace(op, grads=found.get(op.name, op.grads)) for op in ops]
        for op in ops:
            if op.name in found:
                self.errors.extend(grad_problems(op))
        return ops

    def _check_formulas(self, ops: Sequence[ReadOperator], namespace: str) -> None:
        if not any(op.grads or op.keys.shape is not None for op in ops):
            return
        mlx = self.mlx_ops if self.mlx_ops is not None else mlx_names()
        operators = frozenset(op.name for op in ops)
        for op in ops:
            self.errors.extend(formula_problems(op, mlx, namespace, operators))

    def _check_calls(
        self, functions: Sequence[MlxFunction], ops: Sequence[ReadOperator], namespace: str
    ) -> None:
        """The mlx::core functions bound functions call, looked up in MLX's headers (when
        they are installed; else the compiler reports a name they lack). A namespace the
        headers read do not hold (`distributed`, `metal`) is not checked."""
        calls = [(f, o) for f in functions for o in f.overloads if o.function is not None]
        if not calls or (namespace != _MLX and not namespace.startswith(f"{_MLX}::")):
            return
        if self.mlx_ops is None and find_mlx_include() is None:
            return
        mlx = self.mlx_ops if self.mlx_ops is not None else mlx_names()
        relative = namespace.removeprefix(_MLX).removeprefix("::")
        known = mlx | {"::".join(filter(None, (relative, op.name))) for op in ops}
        scopes = {n.rpartition("::")[0] for n in known}
        for function, overload in calls:
            name = str(overload.function)
            if "::" in name:
                if not name.startswith(f"{_MLX}::"):
                    continue  # another library's
                name = name.removeprefix(f"{_MLX}::")
            else:
                name = "::".join(filter(None, (relative, function.submodule, name)))
            scope, _, last = name.rpartition("::")
            if name in known or scope not in scopes:  # a namespace the headers do not hold
                continue
            nearby = [n.rpartition("::")[2] for n in known if n.rpartition("::")[0] == scope]
            at = overload.function_location or overload.location
            self.errors.append(
                Diagnostic(
                    at,
                    f"'{_MLX}::{name}' is not declared by MLX's headers"
                    f"{did_you_mean(last, nearby)}",
                )
            )


def _grouped(bounds: Sequence[tuple[SpecBound, SharedKeys, YamlMap]]) -> list[MlxFunction]:
    """Entries of the spec language's bound functions, one function per name, its
    overloads in the order written (and its method, if an entry says `variants:`)."""
    by_name: dict[str, list[tuple[SpecBound, SharedKeys, YamlMap]]] = {}
    for item in bounds:
        by_name.setdefault(item[0].name, []).append(item)
    functions = []
    for name, items in by_name.items():
        python_name = next((k.python_name for _, k, _ in items if k.python_name), name)
        doc = next((k.doc for _, k, _ in items if k.doc), "")
        overloads = tuple(b.overload for b, _, _ in items)
        function = MlxFunction(python_name, overloads, doc, items[0][0].location)
        entry = next((e for _, _, e in items if VARIANTS_KEY in e), items[0][2])
        functions += variants(entry, function)
    return functions


def _bound_name(entry: YamlMap) -> tuple[str, str]:
    """The submodule ("" for none) and the name of a bound entry's `name:`."""
    written_name = entry["name"]
    if not isinstance(written_name, str) or "." not in written_name:
        name, _ = entry_name(entry)
        return "", name
    submodule, _, name = written_name.partition(".")
    if written_name.startswith(AT_PREFIX):  # a method of `a.at[index]`: `array.at.add`
        submodule, name = "array", written_name[len(AT_PREFIX) :]
    for part, problem in ((submodule, python_name_problem(submodule)), (name, name_problem(name))):
        if problem is not None or not part:
            at = entry.value_location("name")
            raise SpecError(
                f"{problem or 'an empty name'} in '{written_name}': a function of a submodule "
                "is named 'submodule.name' ('linalg.norm')",
                at,
            )
    return (AT_PREFIX[:-1] if written_name.startswith(AT_PREFIX) else submodule), name


def _check_not_in_submodule(entry: YamlMap) -> None:
    name = entry["name"]
    if isinstance(name, str) and "." in name:
        raise SpecError(
            f"'{name}' is in a submodule, which only a bound function (one with 'call:', "
            "'code:', 'overloads:' or only a 'python_signature:') can be: an operator is "
            "defined in the library's namespace",
            entry.value_location("name"),
        )


def _declared_for(ops: Sequence[ReadOperator]) -> dict[str, tuple[str, ReadOperator]]:
    """The functions the library's namespace holds for its operators besides the operators:
    what each is and whose (an implementation, a shape rule, a kernel)."""
    declared: dict[str, tuple[str, ReadOperator]] = {}
    for op in ops:
        if not op.keys.dispatch:
            declared[f"{op.name}_impl"] = ("the implementation the author writes for", op)
            continue
        if op.keys.shape is not None:
            declared[f"{op.name}_output_shapes"] = ("the shape rule of", op)
        for kernel in op.keys.dispatch.values():
            if "::" not in kernel:
                declared.setdefault(kernel, ("a kernel of", op))
    return declared


def _is_settings(entry: YamlMap) -> bool:
    return any(k in entry for k in LIBRARY_KEYS) and not any(k in entry for k in _DIALECT_KEYS)
